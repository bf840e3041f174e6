package template

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// defaultFiles are vros's defaults, one file per language and trigger,
// defaults/<language>/<trigger>.html: a first line "Subject: …", a blank line, then the HTML
// body (the text part is derived from it).
//
//go:embed defaults
var defaultFiles embed.FS

// defaults reads the embedded defaults once; a malformed file is a programming error found
// by the tests (TestDefaults).
var defaults = sync.OnceValues(func() (map[string]Template, error) {
	out := map[string]Template{}
	err := fs.WalkDir(defaultFiles, "defaults", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := defaultFiles.ReadFile(p)
		if err != nil {
			return err
		}
		lang, trigName := path.Base(path.Dir(p)), strings.TrimSuffix(path.Base(p), ".html")
		head, body, ok := strings.Cut(string(b), "\n\n")
		subject, isSubject := strings.CutPrefix(head, "Subject: ")
		if !ok || !isSubject || strings.Contains(subject, "\n") {
			return fmt.Errorf("%s: want a line \"Subject: …\", a blank line and the HTML", p)
		}
		out[lang+"/"+trigName] = Template{Trigger: trigName, Language: lang, Subject: subject, HTML: body}
		return nil
	})
	return out, err
})

// Default is vros's template for a trigger in a language, if it has one.
func Default(trigName, lang string) (Template, bool) {
	m, err := defaults()
	if err != nil {
		return Template{}, false
	}
	t, ok := m[lang+"/"+trigName]
	return t, ok
}
