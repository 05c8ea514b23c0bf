// Vaadin 25.3.0 (npm @vaadin/combo-box): a vaadin-combo-box web component with its label; its
// items render in an overlay outside the field. Save shows the combo box's own value.
import '@vaadin/combo-box';

const box = document.getElementById('fruit');
box.items = ['Apple', 'Banana', 'Cherry', 'Mango', 'Pear'];
let fruit = '';
box.addEventListener('value-changed', (event) => { fruit = event.detail.value; });
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('saved').textContent = `Saved: fruit=${fruit || '-'}`;
});
