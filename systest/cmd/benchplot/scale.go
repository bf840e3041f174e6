package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// scaled are BenchmarkScale's values: number of properties → measure → unit → value.
type scaled map[int]map[string]map[string]float64

var scaleName = regexp.MustCompile(`^(?:Benchmark)?Scale/properties=([0-9]+)/([a-z-]+?)(-[0-9]+)?$`)

// add keeps res when it is one of BenchmarkScale's, and reports whether it was.
func (s scaled) add(res *benchfmt.Result) bool {
	m := scaleName.FindStringSubmatch(string(res.Name.Full()))
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	if s[n] == nil {
		s[n] = map[string]map[string]float64{}
	}
	units := map[string]float64{}
	for _, v := range res.Values {
		units[v.Unit] = v.Value
	}
	s[n][m[2]] = units
	return true
}

// drawScale writes scale-memory.png (each service's resident memory) and scale-p99.png (each
// path's p99) against the number of properties, on a logarithmic axis.
func drawScale(s scaled, dir string) ([]string, error) {
	ns := slices.Sorted(maps.Keys(s))
	memory := map[string]plotter.XYs{}
	p99 := map[string]plotter.XYs{}
	for _, n := range ns {
		for measure, units := range s[n] {
			for unit, v := range units {
				switch {
				case measure == "memory" && strings.HasSuffix(unit, "-rss-MiB"):
					name := strings.TrimSuffix(unit, "-rss-MiB")
					memory[name] = append(memory[name], plotter.XY{X: float64(n), Y: v})
				case unit == "p99-ms":
					p99[measure] = append(p99[measure], plotter.XY{X: float64(n), Y: v})
				}
			}
		}
	}
	var paths []string
	for _, c := range []struct {
		file, title, y string
		lines          map[string]plotter.XYs
	}{
		{"scale-memory.png", "Resident memory per service", "MiB", memory},
		{"scale-p99.png", "p99 latency through edge, 16 clients", "milliseconds (log)", p99},
	} {
		if len(c.lines) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = c.title + " against the number of properties"
		p.X.Label.Text = "properties (100 accounts)"
		p.Y.Label.Text = c.y
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		if c.file == "scale-p99.png" {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		p.Add(plotter.NewGrid())
		for i, name := range slices.Sorted(maps.Keys(c.lines)) {
			l, pts, err := plotter.NewLinePoints(c.lines[name])
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
			pts.Shape = plotutil.Shape(i)
			p.Add(l, pts)
			p.Legend.Add(name, l, pts)
		}
		// Memory grows with the properties, create's p99 falls: the legend goes where the
		// lines are not.
		p.Legend.Top, p.Legend.Left = c.file == "scale-memory.png", true
		path := filepath.Join(dir, c.file)
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return nil, fmt.Errorf("%s: %w", c.file, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
