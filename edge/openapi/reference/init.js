// The reference page of vros's OpenAPI documents (edge/openapi; docs/openapi.md), rendered
// by the vendored swagger-ui-dist. Edge serves the documents at /openapi/<name>.json, each
// naming first the edge that served it, so that "Try it out" calls this edge.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="vros-documents"]');
  var names = meta ? meta.getAttribute("content").split(",").filter(Boolean) : [];
  var urls = names.map(function (name) {
    return { name: name, url: "../openapi/" + name + ".json" };
  });
  // ?urls.primaryName=<name> picks the document shown first (the renderer reads it too, and
  // writes it back when another document is chosen).
  var wanted = new URLSearchParams(window.location.search).get("urls.primaryName");
  var primary = names.indexOf(wanted) >= 0 ? wanted : names[0];
  window.ui = SwaggerUIBundle({
    urls: urls,
    "urls.primaryName": primary,
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
    // Nothing leaves this origin: no online validator badge.
    validatorUrl: null,
    deepLinking: true,
    displayOperationId: true,
    displayRequestDuration: true,
    docExpansion: "list",
    filter: true,
    showExtensions: false,
    tryItOutEnabled: false,
    persistAuthorization: false
  });
})();
