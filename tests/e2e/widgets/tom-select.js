// Tom Select 2.6.2 (npm tom-select): a searchable single select made from a labelled native
// <select>, in plain JavaScript; Save shows the value Tom Select's own change callback gave.
import TomSelect from 'tom-select';
import 'tom-select/dist/css/tom-select.css';

let colour = '';
// eslint-disable-next-line no-new
new TomSelect('#colour', {
  create: false,
  onChange: (value) => { colour = value; },
});
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('saved').textContent = `Saved: colour=${colour || '-'}`;
});
