// Shoelace (npm): web components in shadow DOM, with options slotted into the select; a Save
// button that shows the select's own value.
import '@shoelace-style/shoelace/dist/themes/light.css';
import '@shoelace-style/shoelace/dist/components/select/select.js';
import '@shoelace-style/shoelace/dist/components/option/option.js';
import '@shoelace-style/shoelace/dist/components/button/button.js';

const select = document.getElementById('colour');
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('saved').textContent = `Saved: colour=${select.value || '-'}`;
});
