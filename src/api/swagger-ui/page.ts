/**
 * tagd's own Swagger UI files: the page and the script that starts the UI. They are modules,
 * not .html/.js files, because the build (tsc) copies only compiled TypeScript into dist/.
 * The page has no inline script, so the strict Content-Security-Policy of `/swagger` holds.
 */

/** `GET /swagger`: loads the vendored Swagger UI and tagd's initializer, all same-origin. */
export const swaggerPageHtml = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>tagd API</title>
    <link rel="stylesheet" href="/swagger/swagger-ui.css">
    <link rel="icon" href="data:,">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/swagger/swagger-ui-bundle.js"></script>
    <script src="/swagger/swagger-initializer.js"></script>
  </body>
</html>
`;

/**
 * `GET /swagger/swagger-initializer.js`: starts Swagger UI on tagd's document. No validator
 * (it would call an external host) and no top bar (there is one document); tokens pasted in
 * the Authorize dialog are kept only for the page's lifetime.
 */
export const swaggerInitializerJs = `'use strict';
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/swagger/v2/swagger.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    persistAuthorization: false,
    displayOperationId: true,
  });
});
`;
