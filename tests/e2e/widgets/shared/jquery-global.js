// jQuery as the global `jQuery` and `$`, the way pages of its era loaded it with a <script> tag:
// jQuery UI's builds and Select2's plugin find it there. Imported first, so it runs before them.
import jQuery from 'jquery';

window.jQuery = jQuery;
window.$ = jQuery;
