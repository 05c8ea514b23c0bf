// Choices.js 11.2.4 (npm choices.js): a searchable single select in plain JavaScript, made from
// a labelled native <select> it hides; Save shows the value Choices reports for it.
import Choices from 'choices.js';
import 'choices.js/public/assets/styles/choices.css';

const choices = new Choices('#animal', { itemSelectText: '', shouldSort: false });
document.getElementById('save').addEventListener('click', () => {
  document.getElementById('saved').textContent = `Saved: animal=${choices.getValue(true) || '-'}`;
});
