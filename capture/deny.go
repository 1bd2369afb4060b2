package capture

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DefaultDeny are the paths whose content cairn never records, in any
// repository: environment files, keys and certificates, credential
// stores.
var DefaultDeny = []string{".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".npmrc", ".pypirc", ".netrc", ".git-credentials",
	"credentials.json", "*.tfvars", "secrets.*", ".aws/credentials", ".docker/config.json"}

// DenyFile is the per-repository deny list, at the repository's root: one
// pattern a line ('#' starts a comment), added to DefaultDeny.
const DenyFile = ".cairnignore"

// DenyList decides which paths' content is never recorded. Patterns are
// shell globs (path.Match): one without '/' matches a file's base name
// anywhere; one with '/' matches the path relative to the repository
// root; a trailing '/' (dir/) matches everything under that directory.
// A nil *DenyList denies nothing.
type DenyList struct {
	Patterns []string
}

// LoadDeny reads root's DenyFile (if any) after the defaults.
func LoadDeny(root string) *DenyList {
	d := &DenyList{Patterns: append([]string(nil), DefaultDeny...)}
	if root == "" {
		return d
	}
	f, err := os.Open(filepath.Join(root, DenyFile))
	if err != nil {
		return d
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		d.Patterns = append(d.Patterns, l)
	}
	return d
}

// Match reports whether file (absolute, or relative to root) is denied.
func (d *DenyList) Match(root, file string) bool {
	if d == nil || file == "" {
		return false
	}
	rel := filepath.ToSlash(file)
	if root != "" && filepath.IsAbs(file) {
		if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
	}
	rel = strings.TrimPrefix(rel, "./")
	base := path.Base(rel)
	for _, p := range d.Patterns {
		p = strings.TrimPrefix(filepath.ToSlash(p), "/")
		switch {
		case strings.HasSuffix(p, "/"):
			if strings.HasPrefix(rel, p) || strings.Contains(rel, "/"+p) {
				return true
			}
		case strings.Contains(p, "/"):
			if ok, _ := path.Match(p, rel); ok || strings.HasSuffix(rel, "/"+p) {
				return true
			}
		default:
			if ok, _ := path.Match(p, base); ok {
				return true
			}
		}
	}
	return false
}
