package gateway

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
)

// Step: the widget's files, GET|HEAD /widget/{file} (docs/booking-engine.md, "The
// widget"): the files of edge/widget's assets, prepared once when the gateway is built. The
// one engine, assets/engine.js, is also served under the names the 365villas plugin loads
// (engineAliases); any other file by its path under assets/ (styles, translations); anything
// else is 404. Public, no credentials and no secret in them: any page may load them
// (Access-Control-Allow-Origin: *). Cached five minutes, then revalidated by their ETag (a
// hash of their bytes: 304 when the client holds them).
func (g *Gateway) script(c *fiber.Ctx) error {
	f := g.scripts[c.Params("*")]
	if f == nil {
		c.Set(fiber.HeaderCacheControl, "no-store")
		return httpapi.NotFound(httpapi.StatusNotFound, "no such widget file")
	}
	return f.send(c)
}

// engineFile is the engine's file under assets/; engineAliases are the names it is also
// served as: the plugin's booking page loads general-olb.js, its calendars bcalendar.js and
// bcalendar-more.js.
const engineFile = "engine.js"

var engineAliases = []string{"vros-booking.js", "general-olb.js", "bcalendar.js", "bcalendar-more.js"}

// scriptCache is the widget's files' Cache-Control: a page's scripts are fetched again at
// most five minutes after a release (and then only revalidated if unchanged).
const scriptCache = "public, max-age=300"

// widgetFile is one file as served: its bytes and, when smaller, gzipped, each with its own
// ETag (a strong validator names one representation).
type widgetFile struct {
	body, gz       []byte
	contentType    string
	etag, etagGzip string
}

// loadScripts reads every file under assets/ of fsys, by its path below assets/, and the
// engine under its aliases. The engine must be there.
func loadScripts(fsys fs.FS) (map[string]*widgetFile, error) {
	out := map[string]*widgetFile{}
	err := fs.WalkDir(fsys, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		out[name] = newWidgetFile(body, widgetType(name))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("widget files: %w", err)
	}
	eng := out[engineFile]
	if eng == nil {
		return nil, fmt.Errorf("widget files: assets/%s is not embedded", engineFile)
	}
	for _, alias := range engineAliases {
		out[alias] = eng
	}
	return out, nil
}

func newWidgetFile(body []byte, contentType string) *widgetFile {
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:])[:32]
	f := &widgetFile{body: body, contentType: contentType, etag: `"` + tag + `"`, etagGzip: `"` + tag + `-gz"`}
	if len(body) >= 1024 {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = w.Write(body)
		_ = w.Close()
		if b.Len() < len(body)*9/10 {
			f.gz = b.Bytes()
		}
	}
	return f
}

// widgetType is a widget file's Content-Type, by its extension.
func widgetType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".txt", ".md", "":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// send answers f, gzipped for a client that takes it; 304 when If-None-Match names the
// representation the client would get.
func (f *widgetFile) send(c *fiber.Ctx) error {
	body, etag := f.body, f.etag
	if f.gz != nil && acceptsGzip(c) {
		body, etag = f.gz, f.etagGzip
		c.Set(fiber.HeaderContentEncoding, "gzip")
	}
	c.Set(fiber.HeaderCacheControl, scriptCache)
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		c.Response().Header.Del(fiber.HeaderContentEncoding)
		c.Response().Header.SetNoDefaultContentType(true)
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, f.contentType)
	return c.Send(body)
}

// etagMatches reports whether an If-None-Match header names etag (weakly, as RFC 9110
// compares for GET), or is "*".
func etagMatches(inm, etag string) bool {
	for t := range strings.SplitSeq(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether Accept-Encoding takes gzip (not at q=0).
func acceptsGzip(c *fiber.Ctx) bool {
	for part := range strings.SplitSeq(c.Get(fiber.HeaderAcceptEncoding), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
