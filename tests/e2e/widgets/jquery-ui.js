// jQuery UI 1.14.2 (npm jquery-ui, with jquery 3.7.1): a selectmenu made from a labelled native
// <select>, which jQuery UI hides behind its own button and menu; Save shows the value the
// widget's own change event reported.
import './shared/jquery-global.js';
import 'jquery-ui/dist/jquery-ui.js';
import 'jquery-ui/dist/themes/base/jquery-ui.css';

const $ = window.jQuery;
let speed = '';
$('#speed').selectmenu({
  width: 260,
  change: (event, ui) => { speed = ui.item.value; },
});
$('#save').on('click', () => {
  $('#saved').text(`Saved: speed=${speed || '-'}`);
});
