package webui

import (
	"net/http"
	"strconv"

	"github.com/cairnhq/cairn/internal/throttle"
)

// loginView is the sign-in page.
type loginView struct {
	Next    string
	Problem string
	// Needed says the server asks for a token at all.
	Needed bool
}

func (u *UI) loginForm(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if !u.opts.TokenRequired || visitorOf(r).signedIn {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	u.render(w, r, http.StatusOK, "login", "Sign in", "", loginView{Next: next, Needed: true})
}

func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.PostForm.Get("next"))
	if !u.opts.TokenRequired {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	client := throttle.Client(r)
	if !u.sess.failures.Allow(client) {
		w.Header().Set("Retry-After", strconv.Itoa(int(u.sess.failures.RetryAfter(client).Seconds())))
		u.render(w, r, http.StatusTooManyRequests, "login", "Sign in", "",
			loginView{Next: next, Needed: true, Problem: "Too many wrong tokens in the last minute: wait a minute and try again."})
		return
	}
	if !u.opts.CheckToken(r.PostForm.Get("token")) {
		u.sess.failures.Fail(client)
		u.opts.Logger.Warn("web page sign-in refused: wrong token")
		u.render(w, r, http.StatusUnauthorized, "login", "Sign in", "",
			loginView{Next: next, Needed: true, Problem: "That is not this server's token."})
		return
	}
	// A new session id at every sign-in: an id planted before it is
	// worth nothing after.
	id := u.sess.start()
	setCookie(w, r, sessionCookie, id, int(u.opts.SessionTTL.Seconds()))
	setCookie(w, r, formCookie, "", -1)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	if id := cookieValue(r, sessionCookie); id != "" {
		u.sess.end(id)
	}
	setCookie(w, r, sessionCookie, "", -1)
	if !u.opts.TokenRequired {
		done(w, r, "/", "signedout")
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
