package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The charts' size, and the white margin around each.
const (
	chartWidth  = 11 * vg.Inch
	chartHeight = 5.5 * vg.Inch
	chartMargin = 12
)

// drawCharts draws into dir the counts at the study's rank count beside
// the study's (messages.png, kilobytes.png), when the summary compares
// them and a program passed at that rank count, and the speedup dot plot
// (speedup.png), and returns the files it wrote.
func drawCharts(dir string, s summary) ([]string, error) {
	var files []string
	if s.compares() && slices.ContainsFunc(s.outcomes, func(o outcome) bool { return o.passed(studyRanks) != nil }) {
		for _, q := range quantities {
			path := filepath.Join(dir, q.chart)
			if err := countChart(path, q, s); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	path := filepath.Join(dir, "speedup.png")
	if err := speedupChart(path, s); err != nil {
		return files, err
	}
	return append(files, path), nil
}

// countChart draws grouped bars per program variant, ours beside
// TreadMarks' and PVM's, on a log scale. The bars hold log10 of the
// counts on a linear axis labeled in powers of ten: gonum's log scale
// cannot draw bars, which start at zero.
func countChart(path string, q quantity, s summary) error {
	var names []string
	var ours, tm, pvm plotter.Values
	top := 1.0
	for _, o := range s.outcomes {
		r := o.counted()
		if r == nil {
			continue
		}
		st := o.prog.study
		names = append(names, o.prog.title)
		ours = append(ours, logBar(q.ours(r)))
		tm = append(tm, logBar(theirs(st.treadMarks, q)))
		pvm = append(pvm, logBar(theirs(st.pvm, q)))
		top = max(top, ours[len(ours)-1], tm[len(tm)-1], pvm[len(pvm)-1])
	}
	p := newPlot(fmt.Sprintf("%s at %d ranks: SVM beside TreadMarks and PVM (published, 1996)", q.name, studyRanks))
	p.Y.Label.Text = fmt.Sprintf("%s (log scale)", q.name)
	p.X.Label.Text = "program (no TreadMarks or PVM bar: the study gives no count)"
	p.Y.Min, p.Y.Max = 0, math.Ceil(top)+1 // a decade of room for the legend
	p.Y.Tick.Marker = decades{}
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0 // it would run through the middle bars
	p.Add(grid)
	width := vg.Points(16)
	for i, series := range []struct {
		name string
		vs   plotter.Values
	}{{"SVM", ours}, {"TreadMarks", tm}, {"PVM", pvm}} {
		bars, err := plotter.NewBarChart(series.vs, width)
		if err != nil {
			return fmt.Errorf("%s chart: %w", q.name, err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-1) * width
		p.Add(bars)
		p.Legend.Add(series.name, bars)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	if err := save(p, nil, path); err != nil {
		return fmt.Errorf("%s chart: %w", q.name, err)
	}
	return nil
}

// theirs returns a published count, or 0 if there is none.
func theirs(c *counts, q quantity) float64 {
	if c == nil {
		return 0
	}
	return q.theirs(c)
}

// logBar is the height of a bar for x on the log axis; 0 (no bar) for
// nothing to draw.
func logBar(x float64) float64 {
	if x <= 1 {
		return 0
	}
	return math.Log10(x)
}

// decades ticks an axis holding log10 values: a labeled tick at each power
// of ten, minor ticks between.
type decades struct{}

func (decades) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for d := math.Floor(lo); d <= hi; d++ {
		ticks = append(ticks, plot.Tick{Value: d, Label: decadeLabel(d)})
		for m := 2.0; m < 10; m++ {
			if v := d + math.Log10(m); v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// decadeLabel writes 10^d: 1, 10, 100, 1k, 10k, ...
func decadeLabel(d float64) string {
	n := int(d)
	switch {
	case n >= 6:
		return fmt.Sprintf("%.0fM", math.Pow10(n-6))
	case n >= 3:
		return fmt.Sprintf("%.0fk", math.Pow10(n-3))
	}
	return fmt.Sprintf("%.0f", math.Pow10(n))
}

// speedupChart draws a dot plot, read like a table: a row per program
// variant, its speedup at each rank count a dot of that count's own colour
// and shape on a logarithmic axis, and each count's ideal speedup a dashed
// line of the same colour, all inside the axes.
func speedupChart(path string, s summary) error {
	p := newPlot(fmt.Sprintf("Speedup over the sequential program (%d cores: little to learn beyond %d ranks)", s.cores, s.cores))
	p.X.Label.Text = "speedup (log scale; right of 1: faster than sequential)"
	p.X.Scale = plot.LogScale{}
	type row struct {
		title    string
		speedups map[int]float64
	}
	var rows []row
	lo, hi := 1.0, float64(s.countRanks())
	for _, o := range s.outcomes {
		seq := o.passed(0)
		if seq == nil {
			continue
		}
		r := row{o.prog.title, map[int]float64{}}
		for _, n := range s.ranks {
			if run := o.passed(n); run != nil && run.Seconds > 0 {
				r.speedups[n] = seq.Seconds / run.Seconds
				lo, hi = min(lo, r.speedups[n]), max(hi, r.speedups[n])
			}
		}
		if len(r.speedups) > 0 {
			rows = append(rows, r)
		}
	}
	// The first program at the top, as in the table.
	var labels []plot.Tick
	for i, r := range rows {
		labels = append(labels, plot.Tick{Value: float64(len(rows) - 1 - i), Label: r.title})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(labels)
	p.Y.Min, p.Y.Max = -0.7, float64(len(rows))-0.3
	p.X.Min, p.X.Max = lo/1.4, hi*1.4
	p.X.Tick.Marker = powersOfTwo{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 220}
	grid.Horizontal.Color = color.Gray{Y: 220}
	p.Add(grid)
	legend := plot.NewLegend()
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.RingGlyph{}, draw.PlusGlyph{}}
	for j, n := range s.ranks {
		c := plotutil.DarkColors[j%len(plotutil.DarkColors)]
		ideal, err := plotter.NewLine(plotter.XYs{{X: float64(n), Y: p.Y.Min}, {X: float64(n), Y: p.Y.Max}})
		if err != nil {
			return fmt.Errorf("speedup chart: %w", err)
		}
		ideal.Color = c
		ideal.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(ideal)
		var pts plotter.XYs
		for i, r := range rows {
			if v, ok := r.speedups[n]; ok {
				// Each rank count a little above or below the row's line,
				// so that equal speedups do not hide each other.
				offset := (float64(j) - float64(len(s.ranks)-1)/2) * 0.12
				pts = append(pts, plotter.XY{X: v, Y: float64(len(rows)-1-i) + offset})
			}
		}
		if len(pts) == 0 {
			continue
		}
		dots, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("speedup chart: %w", err)
		}
		dots.Color, dots.Shape, dots.Radius = c, glyphs[j%len(glyphs)], vg.Points(4)
		p.Add(dots)
		legend.Add(fmt.Sprintf("%d %s", n, map[bool]string{true: "rank", false: "ranks"}[n == 1]), dots)
	}
	ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return fmt.Errorf("speedup chart: %w", err)
	}
	ideal.Color = color.Gray{Y: 100}
	ideal.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	legend.Add("ideal at N ranks", ideal)
	if err := save(p, &legend, path); err != nil {
		return fmt.Errorf("speedup chart: %w", err)
	}
	return nil
}

// powersOfTwo ticks a logarithmic axis at every power of two, labelled as
// a fraction below 1 ("1/8").
type powersOfTwo struct{}

func (powersOfTwo) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log2(lo)); e <= math.Ceil(math.Log2(hi)); e++ {
		v := math.Exp2(e)
		if v < lo || v > hi {
			continue
		}
		label := fmt.Sprint(v)
		if e < 0 {
			label = fmt.Sprintf("1/%.0f", 1/v)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// newPlot returns a plot with a title, its legend set off from the edges.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(15)
	p.Title.Padding = vg.Points(10)
	p.X.Label.Padding = vg.Points(6)
	styleLegend(&p.Legend)
	p.Legend.YOffs = -vg.Points(6)
	return p
}

func styleLegend(l *plot.Legend) {
	l.TextStyle.Font.Size = vg.Points(12)
	l.Padding = vg.Points(2)
}

// save writes p as a PNG of the charts' size, with a margin, and with
// legend, if not nil, at the right of the plot.
func save(p *plot.Plot, legend *plot.Legend, path string) error {
	img := vgimg.New(chartWidth, chartHeight)
	m := vg.Points(chartMargin)
	c := draw.Crop(draw.New(img), m, -m, m, -m)
	if legend != nil {
		styleLegend(legend)
		legend.Top, legend.Left = true, true
		legend.YOffs = -vg.Points(40) // level with the plot's top, below its title
		width := legend.Rectangle(c).Size().X
		legend.Draw(draw.Crop(c, c.Size().X-width, 0, 0, 0))
		c = draw.Crop(c, 0, -width-m, 0, 0)
	}
	p.Draw(c)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
