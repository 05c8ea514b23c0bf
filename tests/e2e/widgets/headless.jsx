// Headless UI (npm): a Listbox with its label, and a Save button that shows the value the
// form's own state holds.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Field, Label, Listbox, ListboxButton, ListboxOption, ListboxOptions } from '@headlessui/react';

const people = ['Ana Silva', 'Bruno Costa', 'Carla Dias'];

function Assign() {
  const [who, setWho] = useState(people[0]);
  const [saved, setSaved] = useState('Nothing saved');
  return (
    <div style={{ width: 280 }}>
      <Field>
        <Label>Assignee</Label>
        <Listbox value={who} onChange={setWho}>
          <ListboxButton style={{ display: 'block', width: '100%', textAlign: 'left', padding: 6 }}>{who}</ListboxButton>
          <ListboxOptions anchor="bottom start" style={{ background: 'white', border: '1px solid #999', listStyle: 'none', padding: 4, width: 260 }}>
            {people.map((p) => <ListboxOption key={p} value={p} style={{ padding: 6, cursor: 'default' }}>{p}</ListboxOption>)}
          </ListboxOptions>
        </Listbox>
      </Field>
      <button type="button" onClick={() => setSaved(`Saved: assignee=${who}`)}>Save</button>
      <p id="saved">{saved}</p>
    </div>
  );
}

createRoot(document.getElementById('root')).render(<Assign />);
