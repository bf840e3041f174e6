package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v4"

	"github.com/vros/vros/libs/httpapi"
)

// The reference page: index.html and init.js are ours; the renderer's files are
// swagger-ui-dist's, vendored by `make reference-assets` (docs/openapi.md).
//
//go:embed reference
var reference embed.FS

// Cache policies. The documents and the page's own files are revalidated on every use (their
// ETag makes that a 304); the renderer's files, which index.html names with their content's
// hash (?v=…), are kept a day.
const (
	revalidate = "no-cache"
	keepADay   = "public, max-age=86400"
)

// pageCSP is the reference page's Content-Security-Policy: scripts, styles and requests of
// this origin only (no CDN, nothing inline but the renderer's style attributes), images also
// as data: URLs (the renderer's icons).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one answer prepared at start: its body, its type, ETag and cache policy, and its
// body gzipped (when that is smaller), made at the first request that takes it: edge starts
// without compressing the renderer's 2 MB.
type file struct {
	body         []byte
	contentType  string
	etag         string
	cacheControl string
	csp          bool

	gzOnce sync.Once
	gz     []byte
}

func newFile(body []byte, contentType, cacheControl string) *file {
	return &file{body: body, contentType: contentType, cacheControl: cacheControl, etag: etagOf(body)}
}

func (f *file) gzipped() []byte {
	f.gzOnce.Do(func() { f.gz = gzipped(f.body) })
	return f.gz
}

func etagOf(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return `"` + hex.EncodeToString(h.Sum(nil))[:20] + `"`
}

// gzipped is body gzipped, or nil when that saves little.
func gzipped(body []byte) []byte {
	if len(body) < 1024 {
		return nil
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write(body)
	_ = w.Close()
	if b.Len() > len(body)*9/10 {
		return nil
	}
	return b.Bytes()
}

// send answers f (304 when the client holds it already).
func (f *file) send(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, f.cacheControl)
	c.Set(fiber.HeaderETag, f.etag)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if f.csp {
		c.Set(fiber.HeaderContentSecurityPolicy, pageCSP)
		c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	}
	if notModified(c, f.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, f.contentType)
	if acceptsGzip(c) {
		if gz := f.gzipped(); gz != nil {
			c.Set(fiber.HeaderContentEncoding, "gzip")
			return c.Send(gz)
		}
	}
	return c.Send(f.body)
}

func notModified(c *fiber.Ctx, etag string) bool {
	inm := c.Get(fiber.HeaderIfNoneMatch)
	if inm == "" {
		return false
	}
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

func acceptsGzip(c *fiber.Ctx) bool {
	for _, part := range strings.Split(c.Get(fiber.HeaderAcceptEncoding), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// document is one document as served: its YAML as written, and its JSON, converted once,
// split around the value of its top-level `servers` so that each answer can name the edge
// that served it first (see Server.json).
type document struct {
	yaml *file
	// The JSON is before + servers + after.
	before, after []byte
	// servers are the document's own top-level servers.
	servers []map[string]any

	mu sync.Mutex
	// answers are the JSON answers by the servers they name (a few: one per base URL that
	// edge is reached by), reset when full so that made-up Host headers cannot grow it.
	answers map[string]*file
}

// Server serves the documents and the reference page.
type Server struct {
	docs   map[string]*document
	assets map[string]*file
	index  *file
}

// NewServer prepares every document of Documents (JSON converted once) and the reference
// page's files.
func NewServer() (*Server, error) {
	s := &Server{docs: map[string]*document{}, assets: map[string]*file{}}
	for _, name := range Documents {
		src, err := YAML(name)
		if err != nil {
			return nil, err
		}
		d, err := newDocument(src)
		if err != nil {
			return nil, fmt.Errorf("openapi %s: %w", name, err)
		}
		s.docs[name] = d
	}
	// The renderer's files, kept a day and named in index.html with their hash.
	var renderer [][]byte
	err := fs.WalkDir(reference, "reference", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		body, err := reference.ReadFile(p)
		if err != nil {
			return err
		}
		name := path.Base(p)
		ct := contentType(name)
		switch name {
		case "index.html":
			return nil // below, once the renderer's hash is known
		case "init.js":
			s.assets[name] = newFile(body, ct, revalidate)
		default:
			s.assets[name] = newFile(body, ct, keepADay)
			renderer = append(renderer, body)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "init.js"} {
		if s.assets[need] == nil {
			return nil, fmt.Errorf("reference page: %s is not embedded (make reference-assets)", need)
		}
	}
	index, err := reference.ReadFile("reference/index.html")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, name := range Documents {
		n := html.EscapeString(name)
		links = append(links, `<a href="../openapi/`+n+`.yaml">`+n+`</a>`)
	}
	index = bytes.ReplaceAll(index, []byte("{{renderer}}"), []byte(strings.Trim(etagOf(renderer...), `"`)[:12]))
	index = bytes.ReplaceAll(index, []byte("{{documents}}"), []byte(html.EscapeString(strings.Join(Documents, ","))))
	index = bytes.ReplaceAll(index, []byte("{{links}}"), []byte(strings.Join(links, ", ")))
	s.index = newFile(index, "text/html; charset=utf-8", revalidate)
	s.index.csp = true
	return s, nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case "", ".md":
		return "text/plain; charset=utf-8" // LICENSE, VERSION
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Register prepares the documents and the page (NewServer) and mounts their routes on app.
func Register(app *fiber.App) error {
	s, err := NewServer()
	if err != nil {
		return err
	}
	s.Register(app)
	return nil
}

// Register mounts, without authentication:
//
//	GET /openapi/<name>.yaml  the document as written (application/yaml)
//	GET /openapi/<name>.json  the same document as JSON, naming first the edge that served it
//	GET /reference/           the reference page (/reference redirects there)
//	GET /reference/<file>     its scripts and styles
//
// Anything else under them answers 404 in interface A's envelope.
func (s *Server) Register(app *fiber.App) {
	app.Get("/openapi/:file", s.document)
	// Without strict routing "/reference/" also matches "/reference"; with it, the second
	// route does.
	app.Get("/reference/", s.page)
	app.Get("/reference", s.page)
	app.Get("/reference/:file", s.asset)
}

func (s *Server) document(c *fiber.Ctx) error {
	file := c.Params("file")
	name, ext, _ := strings.Cut(file, ".")
	d := s.docs[name]
	if d == nil || (ext != "yaml" && ext != "json") {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("no OpenAPI document %q: the documents are %s, each as .yaml or .json",
			file, strings.Join(Documents, ", ")))
	}
	if ext == "yaml" {
		return d.yaml.send(c)
	}
	f, err := d.json(baseURL(c))
	if err != nil {
		return err
	}
	return f.send(c)
}

func (s *Server) page(c *fiber.Ctx) error {
	if !strings.HasSuffix(c.Path(), "/") {
		target := "/reference/"
		if q := c.Request().URI().QueryString(); len(q) > 0 {
			target += "?" + string(q)
		}
		return c.Redirect(target, fiber.StatusMovedPermanently)
	}
	return s.index.send(c)
}

func (s *Server) asset(c *fiber.Ctx) error {
	name := c.Params("file")
	if name == "index.html" {
		return s.index.send(c)
	}
	f := s.assets[name]
	if f == nil {
		return httpapi.NotFound(httpapi.StatusNotFound, fmt.Sprintf("the reference page has no file %q", name))
	}
	return f.send(c)
}

// baseURL is the base URL the client reached edge by: scheme and host as edge sees them
// (X-Forwarded-Proto and X-Forwarded-Host count only from a trusted proxy), "" when they
// do not make one.
func baseURL(c *fiber.Ctx) string {
	host := c.Hostname()
	if host == "" {
		return ""
	}
	u, err := url.Parse(c.Protocol() + "://" + host)
	if err != nil || u.Host != host || u.Path != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// json is the document as JSON whose servers are base first (when set and not already
// first), then the document's own.
func (d *document) json(base string) (*file, error) {
	servers := make([]map[string]any, 0, len(d.servers)+1)
	if base != "" && (len(d.servers) == 0 || d.servers[0]["url"] != base) {
		servers = append(servers, map[string]any{"url": base, "description": "the edge that served this document"})
	}
	for _, s := range d.servers {
		if s["url"] != base || len(servers) == 0 {
			servers = append(servers, s)
		}
	}
	list, err := json.Marshal(servers)
	if err != nil {
		return nil, err
	}
	key := string(list)
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.answers[key]; ok {
		return f, nil
	}
	body := slices.Concat(d.before, list, d.after)
	f := newFile(body, "application/json", revalidate)
	if len(d.answers) >= 16 {
		clear(d.answers)
	}
	d.answers[key] = f
	return f, nil
}

// newDocument converts a document's YAML to JSON, member order kept (the page lists paths
// and operations in the order they are written).
func newDocument(src []byte) (*document, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a YAML mapping")
	}
	top := root.Content[0]
	d := &document{yaml: newFile(src, "application/yaml", revalidate), answers: map[string]*file{}}
	var before, after bytes.Buffer
	before.WriteByte('{')
	cur := &before
	first := true
	member := func(key string, value *yaml.Node) error {
		if !first {
			cur.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		cur.Write(k)
		cur.WriteByte(':')
		return writeJSON(cur, value, 0)
	}
	hasServers := false
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, value := top.Content[i].Value, top.Content[i+1]
		if key == "servers" {
			var buf bytes.Buffer
			if err := writeJSON(&buf, value, 0); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(buf.Bytes(), &d.servers); err != nil {
				return nil, fmt.Errorf("servers: %w", err)
			}
			hasServers = true
			if !first {
				cur.WriteByte(',')
			}
			cur.WriteString(`"servers":`)
			cur, first = &after, false
			continue
		}
		if err := member(key, value); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	if !hasServers {
		// Servers of the edge that serves it only: right after openapi and info would be
		// nicer, but last is as valid.
		if !first {
			cur.WriteByte(',')
		}
		cur.WriteString(`"servers":`)
		cur = &after
	}
	cur.WriteByte('}')
	d.before, d.after = before.Bytes(), after.Bytes()
	return d, nil
}

// writeJSON writes a YAML node as JSON. Scalars keep their YAML type (a quoted "200" is a
// string, 200 a number); timestamps stay the text written.
func writeJSON(w *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 200 {
		return fmt.Errorf("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(w, n.Alias, depth+1)
	case yaml.MappingNode:
		w.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				return fmt.Errorf("line %d: only plain keys are supported", k.Line)
			}
			if i > 0 {
				w.WriteByte(',')
			}
			key, _ := json.Marshal(k.Value)
			w.Write(key)
			w.WriteByte(':')
			if err := writeJSON(w, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		w.WriteByte('}')
	case yaml.SequenceNode:
		w.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := writeJSON(w, item, depth+1); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		switch n.ShortTag() {
		case "!!str", "!!timestamp", "!!binary":
			v = n.Value
		case "!!null":
			v = nil
		case "!!bool", "!!int":
			if err := n.Decode(&v); err != nil {
				return fmt.Errorf("line %d: %w", n.Line, err)
			}
		case "!!float":
			f, err := strconv.ParseFloat(n.Value, 64)
			if err != nil {
				return fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
			}
			v = f
		default:
			return fmt.Errorf("line %d: unsupported tag %s", n.Line, n.ShortTag())
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		w.Write(b)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}
