package photo

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// Photos turns photo "image" fields into renditions within a memory budget: the bytes
// that all photos being decoded and rendered at once may take (Limits.Memory of its
// Fetcher's Config). Each photo takes the memory its header says it needs (Inspect's
// Need.Bytes) for as long as it is decoded and rendered, and waits for it (in order of
// arrival) at most Config.MaxWait. Links are downloaded before, holding no memory. Create
// one per process and share it.
type Photos struct {
	fetcher *Fetcher
	mem     *semaphore.Weighted
	// waiting, when set, is told of each photo about to wait for memory (tests).
	waiting func(Need)
}

// NewPhotos returns the Photos of a process; f (nil: DefaultFetcher) downloads links and
// its Config gives the limits.
func NewPhotos(f *Fetcher) *Photos {
	if f == nil {
		f = DefaultFetcher()
	}
	return &Photos{fetcher: f, mem: semaphore.NewWeighted(f.cfg.Memory)}
}

// Memory is the bytes all photos processed at once may take.
func (p *Photos) Memory() int64 { return p.fetcher.cfg.Memory }

// Process parses the spec photo "image" field, downloads a link, checks the image's header
// against the limits (Inspect), waits for the memory it needs, then decodes and renders
// it. Input problems are *Error; a photo that waited too long for memory is ErrBusy.
func (p *Photos) Process(ctx context.Context, field string) (*Result, error) {
	cfg := p.fetcher.cfg
	src, err := ParseSource(field, cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	data := src.Data
	if src.IsLink() {
		if data, err = p.fetcher.Fetch(ctx, src.URL); err != nil {
			return nil, err
		}
	}
	n, err := Inspect(data, cfg.Limits)
	if err != nil {
		return nil, err
	}
	if err := p.acquire(ctx, n); err != nil {
		return nil, err
	}
	defer p.mem.Release(n.Bytes)
	img, err := decodeInspected(data, n, cfg.Limits)
	if err != nil {
		return nil, err
	}
	return Render(img)
}

func (p *Photos) acquire(ctx context.Context, n Need) error {
	if p.mem.TryAcquire(n.Bytes) {
		return nil
	}
	if p.waiting != nil {
		p.waiting(n)
	}
	wait := p.fetcher.cfg.MaxWait
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := p.mem.Acquire(wctx, n.Bytes); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: the request ended while the photo waited for memory: %w", ErrBusy, ctx.Err())
		}
		return fmt.Errorf("%w: the %d MiB this photo needs stayed taken by other photos for %s; retry later", ErrBusy, mib(n.Bytes), wait.Round(time.Second))
	}
	return nil
}
