// Command benchplot draws `go test -bench` output (make bench's) as PNG charts: for each
// benchmark, the p50 and p99 latency of every sub-benchmark that reports them (vros through
// edge beside the bare Fiber baselines), one file per benchmark in the output directory.
// BenchmarkScale's results (make bench-scale: Scale/properties=N/<measure>) are drawn against
// the number of properties instead: each service's resident memory (scale-memory.png) and the
// p99 of each path (scale-p99.png).
//
//	go run ./cmd/benchplot -o ../docs/bench < bench.txt
//
// The output is parsed with golang.org/x/perf/benchfmt (the format's own reader) and drawn
// with gonum.org/v1/plot.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// row is one sub-benchmark's latencies.
type row struct {
	name     string
	p50, p99 float64
}

func main() {
	out := flag.String("o", "docs/bench", "the directory to write the charts to")
	flag.Parse()
	groups, order, sc, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
	if len(order) == 0 && len(sc) == 0 {
		fmt.Fprintln(os.Stderr, "benchplot: no benchmark reported p50-ms and p99-ms")
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
	if len(sc) > 0 {
		paths, err := drawScale(sc, *out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchplot: scale:", err)
			os.Exit(1)
		}
		for _, p := range paths {
			fmt.Println(p)
		}
	}
	for _, g := range order {
		path := filepath.Join(*out, strings.ToLower(g)+".png")
		if err := draw(g, groups[g], path); err != nil {
			fmt.Fprintln(os.Stderr, "benchplot:", g+":", err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}

var procs = regexp.MustCompile(`-[0-9]+$`)

// read groups the results that report p50-ms and p99-ms by benchmark, in the order read; a
// sub-benchmark reported twice keeps its last result. BenchmarkScale's results are returned
// apart, by number of properties and measure.
func read(r io.Reader) (map[string][]row, []string, scaled, error) {
	groups := map[string][]row{}
	var order []string
	sc := scaled{}
	br := benchfmt.NewReader(r, "stdin")
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		if sc.add(res) {
			continue
		}
		var x row
		have := 0
		for _, v := range res.Values {
			switch v.Unit {
			case "p50-ms":
				x.p50, have = v.Value, have+1
			case "p99-ms":
				x.p99, have = v.Value, have+1
			}
		}
		if have != 2 {
			continue
		}
		full := procs.ReplaceAllString(strings.TrimPrefix(string(res.Name.Full()), "Benchmark"), "")
		group, sub, _ := strings.Cut(full, "/")
		if sub == "" {
			sub = group
		}
		x.name = sub
		if _, seen := groups[group]; !seen {
			order = append(order, group)
		}
		rows := slices.DeleteFunc(groups[group], func(o row) bool { return o.name == sub })
		groups[group] = append(rows, x)
	}
	return groups, order, sc, br.Err()
}

// draw writes a horizontal bar chart of the rows' p50 and p99 to path.
func draw(title string, rows []row, path string) error {
	p := plot.New()
	p.Title.Text = title + ": latency per target (ms)"
	p.X.Label.Text = "milliseconds"
	p50, p99 := make(plotter.Values, len(rows)), make(plotter.Values, len(rows))
	names := make([]string, len(rows))
	for i, r := range rows {
		p50[i], p99[i], names[i] = r.p50, r.p99, r.name
	}
	w := vg.Points(9)
	b50, err := plotter.NewBarChart(p50, w)
	if err != nil {
		return err
	}
	b99, err := plotter.NewBarChart(p99, w)
	if err != nil {
		return err
	}
	b50.Horizontal, b99.Horizontal = true, true
	b50.Color, b99.Color = plotutil.Color(0), plotutil.Color(1)
	b50.LineStyle.Width, b99.LineStyle.Width = 0, 0
	b50.Offset, b99.Offset = -w/2, w/2
	p.Add(b50, b99, plotter.NewGrid())
	p.Legend.Add("p50", b50)
	p.Legend.Add("p99", b99)
	p.Legend.Top = true
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, p.X.Max*1.15 // room for the legend
	return p.Save(8*vg.Inch, vg.Length(1.2+0.3*float64(len(rows)))*vg.Inch, path)
}
