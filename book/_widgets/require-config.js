// Resolve AMD module URLs against the folder this script is served from (the book's _static/),
// not against the page. embed-amd.js derives its public path from its module URL, so this is
// what makes the FontAwesome fonts of the widgets load from _static/@jupyter-widgets/... on
// every page, whatever its depth. Loaded after require.js and before embed-amd.js (_config.yml).
(function () {
  var src = document.currentScript && document.currentScript.src;
  if (src && window.require && window.require.config) {
    window.require.config({ baseUrl: src.substring(0, src.lastIndexOf("/") + 1) });
  }
})();
