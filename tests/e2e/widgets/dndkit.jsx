// dnd-kit (npm), as sites use it: a sortable list driven by pointer events (no HTML5 drag
// events), with its pointer sensor's usual 5 px activation distance; the new order is shown.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { DndContext, PointerSensor, KeyboardSensor, useSensor, useSensors, closestCenter } from '@dnd-kit/core';
import { SortableContext, useSortable, arrayMove, verticalListSortingStrategy, sortableKeyboardCoordinates } from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';

function Item({ id }) {
  const { attributes, listeners, setNodeRef, transform, transition } = useSortable({ id });
  const style = { transform: CSS.Transform.toString(transform), transition, padding: 12, margin: '4px 0', border: '1px solid #999', background: '#eef', width: 260, cursor: 'grab', listStyle: 'none' };
  return <li ref={setNodeRef} style={style} {...attributes} {...listeners}>{id}</li>;
}

function Playlist() {
  const [songs, setSongs] = useState(['Blue in Green', 'So What', 'Freddie Freeloader', 'All Blues']);
  const sensors = useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 5 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const onDragEnd = ({ active, over }) => {
    if (over && active.id !== over.id) setSongs((s) => arrayMove(s, s.indexOf(active.id), s.indexOf(over.id)));
  };
  return (
    <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
      <SortableContext items={songs} strategy={verticalListSortingStrategy}>
        <ul style={{ padding: 0 }}>{songs.map((id) => <Item key={id} id={id} />)}</ul>
      </SortableContext>
      <p id="order">Order: {songs.join(', ')}</p>
    </DndContext>
  );
}

createRoot(document.getElementById('root')).render(<Playlist />);
