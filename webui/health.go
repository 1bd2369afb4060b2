package webui

import (
	"net/http"

	"github.com/cairnhq/cairn"
)

// healthView is the health page.
type healthView struct {
	Status   cairn.Status
	Index    cairn.IndexStatus
	Healing  cairn.HealStatus
	Degraded int64
	Settings cairn.Settings
	// Doctor is set once the checks ran (Ran), with repairs when Fixed.
	Ran, Fixed bool
	Doctor     cairn.DoctorReport
	Errors     []ErrorEntry
	ErrorCount int64
	Logging    bool
}

func (u *UI) healthView(r *http.Request) (healthView, error) {
	ctx := r.Context()
	var v healthView
	var err error
	if v.Status, err = u.eng.Status(ctx); err != nil {
		return v, err
	}
	if v.Index, err = u.eng.IndexStatus(ctx); err != nil {
		return v, err
	}
	if v.Settings, err = u.eng.Config(ctx, cairn.ConfigRequest{}); err != nil {
		return v, err
	}
	v.Healing, v.Degraded = u.eng.Healing(), u.eng.DegradedRetrievals()
	if u.opts.Errors != nil {
		v.Logging = true
		v.Errors, v.ErrorCount = u.opts.Errors.Recent()
	}
	return v, nil
}

func (u *UI) health(w http.ResponseWriter, r *http.Request) {
	v, err := u.healthView(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	if r.URL.Query().Get("doctor") == "1" {
		if v.Doctor, err = u.eng.Doctor(r.Context(), cairn.DoctorRequest{}); err != nil {
			u.fail(w, r, err)
			return
		}
		v.Ran = true
	}
	u.render(w, r, http.StatusOK, "health", "Health", "health", v)
}

func (u *UI) doctorFix(w http.ResponseWriter, r *http.Request) {
	rep, err := u.eng.Doctor(r.Context(), cairn.DoctorRequest{Fix: true})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v, err := u.healthView(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	v.Doctor, v.Ran, v.Fixed = rep, true, true
	u.render(w, r, http.StatusOK, "health", "Health", "health", v)
}
