// SortableJS (npm), as sites use it: a list reordered by dragging its items, with the native
// HTML5 drag events it listens to; the new order is shown under the list.
import Sortable from 'sortablejs';

const list = document.getElementById('tasks');
const order = () => [...list.children].map((li) => li.textContent.trim()).join(', ');
const shown = document.getElementById('order');
shown.textContent = `Order: ${order()}`;
Sortable.create(list, {
  animation: 0,
  onEnd: () => { shown.textContent = `Order: ${order()}`; },
});
