package api

import (
	"archive/zip"
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// The operator's routes on one whole account, which edge's admin API calls with the
// account's signed tenant (docs/interface-a.md, "Account usage, export and erasure"): plain
// JSON answers, errors in interface A's error shape.

// service names property-svc in its export archive.
const service = "property-svc"

// exportTimeout bounds writing one export: the archive is streamed after the handler has
// returned, so the request's context no longer bounds it.
const exportTimeout = 10 * time.Minute

func (a *API) registerAccount(app *fiber.App, auth *tenancy.Verifier) {
	g := app.Group("/internal/account", httpapi.Use(httpapi.EnvelopeA), tenancyfiber.Require(auth))
	g.Get("/usage", a.usage)
	g.Get("/export", a.export)
	g.Post("/erase", a.erase)
}

// refuseErased answers a write of an erased account (they cannot normally arrive: edge
// refuses the account's credentials first).
func refuseErased(c *fiber.Ctx) error {
	err := c.Next()
	if errors.Is(err, property.ErrAccountErased) {
		return &httpapi.Error{HTTP: http.StatusForbidden, Type: "forbidden", Status: httpapi.StatusInvalid, Message: "the account has been erased"}
	}
	return err
}

// limitError answers a create beyond the plan's most properties.
func limitError(le *property.LimitError) error {
	return &httpapi.Error{HTTP: http.StatusForbidden, Type: "forbidden", Status: httpapi.StatusInvalid, Message: le.Error()}
}

type usageDTO struct {
	Properties propertyUsageDTO `json:"properties"`
	Photos     photoUsageDTO    `json:"photos"`
}

type propertyUsageDTO struct {
	Current int64 `json:"current"`
	Created int64 `json:"created"`
	Deleted int64 `json:"deleted"`
}

type photoUsageDTO struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// usage: GET /internal/account/usage?from=&to= (RFC 3339; from inclusive, to exclusive).
func (a *API) usage(c *fiber.Ctx) error {
	from, err := queryTime(c, "from")
	if err != nil {
		return err
	}
	to, err := queryTime(c, "to")
	if err != nil {
		return err
	}
	if !to.After(from) {
		return httpapi.InvalidField("to", "must be after from")
	}
	u, err := a.props.Usage(c.UserContext(), tenancyfiber.From(c).AccountID, from, to)
	if err != nil {
		return err
	}
	return c.JSON(usageDTO{
		Properties: propertyUsageDTO{Current: u.Current, Created: u.Created, Deleted: u.Deleted},
		Photos:     photoUsageDTO{Count: u.Photos, Bytes: u.PhotoBytes},
	})
}

// queryTime reads the required RFC 3339 query parameter name.
func queryTime(c *fiber.Ctx, name string) (time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return time.Time{}, httpapi.InvalidField(name, "is required")
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, httpapi.InvalidField(name, "must be an RFC 3339 time, such as 2026-11-01T00:00:00Z")
	}
	return t.UTC(), nil
}

// manifestDTO is property-svc/manifest.json: the id of every record in the archive, by
// collection (photos by media key), sorted.
type manifestDTO struct {
	Service   string              `json:"service"`
	AccountID string              `json:"account_id"`
	Records   map[string][]string `json:"records"`
}

// export: GET /internal/account/export — a zip streamed as it is written: each collection
// as property-svc/<collection>.json, every photo's image (its original rendition, the
// source stored) as property-svc/photos/<key>.jpg, then property-svc/photos.json (the
// photos whose image is in the archive) and property-svc/manifest.json. A failure once the
// answer has begun cuts the archive short, without its central directory, so that no reader
// takes it for whole.
func (a *API) export(c *fiber.Ctx) error {
	acc := tenancyfiber.From(c).AccountID
	e, err := a.props.Export(c.UserContext(), acc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), exportTimeout)
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="property-svc-`+acc+`.zip"`)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		if err := a.writeExport(ctx, w, acc, e); err != nil {
			a.log.ErrorContext(ctx, "account export cut short", "account", acc, "err", err)
		}
	})
	return nil
}

func (a *API) writeExport(ctx context.Context, w *bufio.Writer, acc string, e property.Export) error {
	z := zip.NewWriter(w)
	man := manifestDTO{Service: service, AccountID: acc, Records: map[string][]string{}}
	writeJSON := func(name string, recs []property.ExportRecord) error {
		f, err := z.Create(service + "/" + name + ".json")
		if err != nil {
			return err
		}
		data := make([]json.RawMessage, len(recs))
		ids := make([]string, len(recs))
		for i, r := range recs {
			data[i], ids[i] = r.Data, r.ID
		}
		slices.Sort(ids)
		man.Records[name] = ids
		return json.NewEncoder(f).Encode(data)
	}
	for _, col := range e.Collections {
		if err := writeJSON(col.Name, col.Records); err != nil {
			return err
		}
	}
	photos := make([]property.ExportRecord, 0, len(e.Photos))
	for _, ph := range e.Photos {
		img, err := a.props.Rendition(ctx, ph.ID, photo.Original)
		if errors.Is(err, property.ErrPhotoNotFound) {
			continue // deleted since the records were read
		}
		if err != nil {
			return err
		}
		// JPEG does not compress further: stored as it is.
		f, err := z.CreateHeader(&zip.FileHeader{Name: service + "/photos/" + ph.ID + photo.Ext, Method: zip.Store, Modified: time.Now()})
		if err != nil {
			return err
		}
		if _, err := f.Write(img); err != nil {
			return err
		}
		photos = append(photos, ph)
	}
	if err := writeJSON("photos", photos); err != nil {
		return err
	}
	f, err := z.Create(service + "/manifest.json")
	if err != nil {
		return err
	}
	if err := json.NewEncoder(f).Encode(man); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return w.Flush()
}

// erase: POST /internal/account/erase — erases everything property-svc holds of the
// account; 200 once its data is gone and the tombstones and the erasure event are recorded
// in the outbox. Repeating it answers the same.
// This replica's cache of served images is emptied, so that it serves none of the
// account's photos from then on; another replica's cache lets its copies expire (within 5
// minutes).
func (a *API) erase(c *fiber.Ctx) error {
	if err := a.props.Erase(c.UserContext(), tenancyfiber.From(c).AccountID); err != nil {
		return err
	}
	a.renditions.Purge()
	return c.JSON(fiber.Map{"erased": true})
}
