// Package webui is cairn's web page: search with explained scores, the
// timeline of capsules and observations, thoughts and the knowledge graph,
// code memory's introspection and the engine's health, served as HTML
// rendered on the server (html/template) with a little JavaScript that
// only improves what already works without it. Templates, style sheet and
// script are embedded in the binary: no CDN, no network, works offline.
//
// It holds no business logic: every page reads the cairn.Engine and every
// action calls it. httpapi serves it (httpapi.Options.Page) behind the
// same host check and cross-origin protection as the API.
//
// Security: every memory text is untrusted and escaped by html/template
// (a stored <script> is shown as text); a strict Content-Security-Policy
// allows only the page's own script and style sheet; every state-changing
// request is a POST carrying a CSRF token bound to the visitor's cookie;
// when the server has a token, visitors sign in with it through a form
// that sets an HttpOnly, SameSite=Strict session cookie.
package webui
