package template

import (
	"io"
	"strings"

	"golang.org/x/net/html"
)

// textOfHTML writes the plain-text part of a rendered HTML body: the text as a reader sees
// it (whitespace collapsed, entities decoded), paragraphs and headings apart, line breaks
// kept, list items as "- item", a link as "text (url)" (the url alone when it is its text),
// nothing of head, style or script.
func textOfHTML(w io.Writer, body string) error {
	z := html.NewTokenizer(strings.NewReader(body))
	o := &plain{}
	skip := 0
	type link struct {
		href  string
		start int
	}
	var links []link
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return err
			}
			_, err := io.WriteString(w, o.String())
			return err
		case html.TextToken:
			if skip == 0 {
				o.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			end := tt == html.EndTagToken
			switch tag {
			case "head", "style", "script", "title":
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
			case "br":
				o.brk(1)
			case "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "section",
				"article", "header", "footer", "blockquote", "hr", "address":
				o.brk(2)
			case "tr", "dt", "dd":
				o.brk(1)
			case "td", "th":
				if !end {
					o.space = true
				}
			case "li":
				if !end {
					o.brk(1)
					o.word("- ")
				}
			case "img":
				if alt := strings.TrimSpace(attrs["alt"]); alt != "" && skip == 0 {
					o.text(alt)
				}
			case "a":
				if !end {
					links = append(links, link{href: attrs["href"], start: o.b.Len()})
				} else if n := len(links); n > 0 {
					l := links[n-1]
					links = links[:n-1]
					o.link(strings.TrimSpace(o.b.String()[l.start:]), l.href)
				}
			}
		}
	}
}

// plain builds text with collapsed whitespace and pending line breaks.
type plain struct {
	b     strings.Builder
	space bool // a space is due before the next word
	nl    int  // line breaks due before the next word
}

func (o *plain) String() string { return strings.TrimSpace(o.b.String()) + "\n" }

func (o *plain) brk(n int) {
	if o.b.Len() > 0 && n > o.nl {
		o.nl = n
	}
}

func (o *plain) text(s string) {
	if s == "" {
		return
	}
	if isSpace(s[0]) {
		o.space = true
	}
	// HTML's white space is ASCII's: a no-break space (in amounts) stays.
	for i, f := range strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }) {
		if i > 0 {
			o.space = true
		}
		o.word(f)
	}
	if isSpace(s[len(s)-1]) {
		o.space = true
	}
}

func (o *plain) word(s string) {
	switch {
	case o.nl > 0:
		o.b.WriteString(strings.Repeat("\n", o.nl))
	case o.space && o.b.Len() > 0 && !strings.HasSuffix(o.b.String(), "\n") && !strings.HasSuffix(o.b.String(), "- "):
		o.b.WriteByte(' ')
	}
	o.nl, o.space = 0, false
	o.b.WriteString(s)
}

// link writes a link's url after its text, unless it says nothing more than the text.
func (o *plain) link(text, href string) {
	href = strings.TrimSpace(href)
	shown := strings.TrimPrefix(strings.TrimPrefix(href, "mailto:"), "tel:")
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") ||
		shown == text || strings.TrimSuffix(shown, "/") == strings.TrimSuffix(text, "/") {
		return
	}
	if text == "" {
		o.space = true
		o.word(shown)
		return
	}
	o.space = true
	o.word("(" + shown + ")")
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }
