package httpstatus_test

import (
	"net/http"
	"testing"

	"github.com/cairnhq/cairn/internal/httpstatus"
	"github.com/cairnhq/cairn/memory"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		code memory.Code
		want int
	}{
		{memory.CodeInvalidParams, http.StatusBadRequest},
		{memory.CodeNotFound, http.StatusNotFound},
		{memory.CodeConflict, http.StatusConflict},
		{memory.CodeFeatureDisabled, http.StatusForbidden},
		{memory.CodeEmbedderUnavailable, http.StatusServiceUnavailable},
		{memory.CodeDBError, http.StatusServiceUnavailable},
		{memory.CodeInternal, http.StatusInternalServerError},
		{memory.CodeTimeout, http.StatusGatewayTimeout},
		{memory.Code("unknown"), http.StatusInternalServerError},
	} {
		if got := httpstatus.Of(c.code); got != c.want {
			t.Errorf("Of(%s) = %d, want %d", c.code, got, c.want)
		}
	}
}
