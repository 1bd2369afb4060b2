package httpstatus

import (
	"net/http"

	"github.com/cairnhq/cairn/memory"
)

// Of is the HTTP status of an error code: 400 invalid_params, 404
// not_found, 409 conflict, 403 feature_disabled, 503 embedder_unavailable
// and db_error, 504 timeout, 500 anything else.
func Of(code memory.Code) int {
	switch code {
	case memory.CodeInvalidParams:
		return http.StatusBadRequest
	case memory.CodeNotFound:
		return http.StatusNotFound
	case memory.CodeConflict:
		return http.StatusConflict
	case memory.CodeFeatureDisabled:
		return http.StatusForbidden
	case memory.CodeEmbedderUnavailable, memory.CodeDBError:
		return http.StatusServiceUnavailable
	case memory.CodeTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
