// Package httpstatus maps cairn's error codes to HTTP statuses, once for
// the HTTP API and the web page.
package httpstatus
