// Select2 4.1.0 (npm select2, with jquery 3.7.1): a single select with a search box, made from
// a labelled native <select>; Save shows the value Select2's own select event reported.
import './shared/jquery-global.js';
import select2 from 'select2';
import 'select2/dist/css/select2.css';

const $ = window.jQuery;
// Its CommonJS build exports a function that installs the plugin on the jQuery it is given.
select2(window, $);
let country = '';
$('#country').select2({ width: '280px', placeholder: 'Choose a country' })
  .on('select2:select', (event) => { country = event.params.data.id; });
$('#save').on('click', () => {
  $('#saved').text(`Saved: country=${country || '-'}`);
});
