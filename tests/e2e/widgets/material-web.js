// Material Web 2.5.0 (npm @material/web): Google's md-outlined-select web component, whose
// combobox and menu live in its shadow DOM while its md-select-option items stay in the page's
// light DOM; Save shows the select's own value.
import '@material/web/select/outlined-select.js';
import '@material/web/select/select-option.js';

const select = document.getElementById('language');
let language = '';
select.addEventListener('change', () => { language = select.value; });
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('saved').textContent = `Saved: language=${language || '-'}`;
});
