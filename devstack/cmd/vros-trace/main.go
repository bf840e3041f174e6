// Command vros-trace prints the traces Jaeger holds as span trees, one span a line: the
// terminal's view of a request's path through vros (make observe; docs/tracing.md). Jaeger
// built from its Go module serves no UI of its own, and this needs none.
//
//	vros-trace [-jaeger http://127.0.0.1:16686] <trace id>...          those traces
//	vros-trace [-jaeger ...] [-service edge] [-limit 5] [-lookback 1h]  the latest of a service
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/vros/vros/devstack/jaeger"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vros-trace:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("jaeger", "http://127.0.0.1:16686", "Jaeger's query address (make observe's)")
	service := flag.String("service", "edge", "without trace ids: the latest traces with a span of this service")
	limit := flag.Int("limit", 5, "without trace ids: how many traces")
	lookback := flag.Duration("lookback", time.Hour, "without trace ids: how far back")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := jaeger.Client{URL: *url}

	var traces []jaeger.Trace
	if flag.NArg() > 0 {
		for _, id := range flag.Args() {
			t, err := c.Trace(ctx, id)
			if err != nil {
				return fmt.Errorf("trace %s: %w", id, err)
			}
			traces = append(traces, *t)
		}
	} else {
		var err error
		if traces, err = c.Search(ctx, *service, *limit, *lookback); err != nil {
			return err
		}
		if len(traces) == 0 {
			fmt.Printf("no trace with a span of %s in the last %s\n", *service, *lookback)
			return nil
		}
		// The latest last, nearest the prompt.
		slices.SortFunc(traces, func(a, b jaeger.Trace) int { return int(start(a) - start(b)) })
	}
	for _, t := range traces {
		fmt.Printf("trace %s  %s  %d spans\n%s\n", t.TraceID, time.UnixMicro(start(t)).Format("15:04:05.000"), len(t.Spans), t.Tree())
	}
	return nil
}

// start is when t's first span started, in microseconds since the epoch.
func start(t jaeger.Trace) int64 {
	var first int64
	for _, s := range t.Spans {
		if first == 0 || s.StartTime < first {
			first = s.StartTime
		}
	}
	return first
}
