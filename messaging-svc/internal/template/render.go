package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	texttemplate "text/template"
	"text/template/parse"
	"time"
)

// Bounds of a template: the size of each part's source and of each part rendered, the
// nesting of its range loops, and the time a render takes when the caller's context sets
// no earlier deadline.
const (
	MaxSource      = 64 << 10
	MaxOutput      = 256 << 10
	MaxRangeDepth  = 3
	DefaultTimeout = 2 * time.Second
)

// ErrTooLarge: a part rendered more than MaxOutput bytes. ErrTimeout: a render did not end
// before its deadline.
var (
	ErrTooLarge = fmt.Errorf("renders more than %d KiB", MaxOutput>>10)
	ErrTimeout  = errors.New("took longer than its time limit")
)

// Rendered is a message's three parts.
type Rendered struct {
	Subject string
	HTML    string
	Text    string
}

// Part names, as the fields a refusal names.
const (
	FieldTrigger  = "template.trigger"
	FieldLanguage = "template.language"
	FieldSubject  = "template.subject"
	FieldHTML     = "template.html"
	FieldText     = "template.text"
)

// compiled is a template parsed and checked, ready to run.
type compiled struct {
	subject, text *texttemplate.Template // text nil: derived from the HTML
	html          *htmltemplate.Template
}

// compile parses and checks a template's parts; a refusal is a *FieldError.
func compile(t Template) (*compiled, error) {
	fn := funcs(t.Language)
	c := &compiled{}
	var err error
	if c.subject, err = parseText(FieldSubject, t.Subject, fn); err != nil {
		return nil, err
	}
	if strings.TrimSpace(t.Text) != "" {
		if c.text, err = parseText(FieldText, t.Text, fn); err != nil {
			return nil, err
		}
	}
	if err := sourceSize(FieldHTML, t.HTML); err != nil {
		return nil, err
	}
	h, err := htmltemplate.New(partName(FieldHTML)).Option("missingkey=error").Funcs(fn).Parse(t.HTML)
	if err != nil {
		return nil, goError(FieldHTML, err)
	}
	if err := check(FieldHTML, h.Tree, len(h.Templates())); err != nil {
		return nil, err
	}
	c.html = h
	return c, nil
}

func parseText(field, src string, fn map[string]any) (*texttemplate.Template, error) {
	if err := sourceSize(field, src); err != nil {
		return nil, err
	}
	t, err := texttemplate.New(partName(field)).Option("missingkey=error").Funcs(fn).Parse(src)
	if err != nil {
		return nil, goError(field, err)
	}
	if err := check(field, t.Tree, len(t.Templates())); err != nil {
		return nil, err
	}
	return t, nil
}

func sourceSize(field, src string) error {
	if len(src) > MaxSource {
		return &FieldError{Field: field, Message: fmt.Sprintf("is longer than %d KiB", MaxSource>>10)}
	}
	return nil
}

// partName is the name Go's errors give a part: "html" for template.html.
func partName(field string) string { return strings.TrimPrefix(field, "template.") }

// refused are the built-in functions a template may not call: call runs a function value,
// the print family can build a string of any size before the output limit sees it.
var refused = map[string]bool{"call": true, "print": true, "printf": true, "println": true}

// check refuses what parsing accepts but vros does not: sub-templates (define, block,
// template: they allow recursion), the refused functions, ranges over a number and ranges
// nested deeper than MaxRangeDepth (each bounds the work a template can ask for without
// writing a byte).
func check(field string, tree *parse.Tree, templates int) error {
	if tree == nil || tree.Root == nil {
		return nil
	}
	if templates > 1 {
		return &FieldError{Field: field, Message: "defines sub-templates (define, block): not allowed"}
	}
	refuse := func(n parse.Node, msg string) error {
		loc, _ := tree.ErrorContext(n)
		return &FieldError{Field: field, Line: lineOf(loc), Message: msg}
	}
	var walk func(n parse.Node, depth int) error
	walk = func(n parse.Node, depth int) error {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return nil
			}
			for _, c := range n.Nodes {
				if err := walk(c, depth); err != nil {
					return err
				}
			}
		case *parse.TemplateNode:
			return refuse(n, fmt.Sprintf("{{template %q}}: sub-templates are not allowed", n.Name))
		case *parse.ActionNode:
			return walk(n.Pipe, depth)
		case *parse.PipeNode:
			if n == nil {
				return nil
			}
			for _, c := range n.Cmds {
				if err := walk(c, depth); err != nil {
					return err
				}
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				if err := walk(a, depth); err != nil {
					return err
				}
			}
		case *parse.IdentifierNode:
			if refused[n.Ident] {
				return refuse(n, fmt.Sprintf("function %q is not allowed", n.Ident))
			}
		case *parse.IfNode:
			return walkBranch(walk, &n.BranchNode, depth)
		case *parse.WithNode:
			return walkBranch(walk, &n.BranchNode, depth)
		case *parse.RangeNode:
			if depth+1 > MaxRangeDepth {
				return refuse(n, fmt.Sprintf("range loops nested deeper than %d", MaxRangeDepth))
			}
			if !rangeable(n.Pipe) {
				return refuse(n, "range over a number, a variable or a function's result is not allowed: range over a list of the data (.Booking.Payments)")
			}
			return walkBranch(walk, &n.BranchNode, depth+1)
		}
		return nil
	}
	return walk(tree.Root, 0)
}

// rangeable tells whether a range's pipeline reads a list of the data: a field chain
// (.Booking.Payments, $.Booking.Schedule, dot) that does not end on an integer. Go's
// templates range over an integer, which would let a literal, a number of a booking
// (.Booking.Nights) or a function's result (len) decide how much work a render does.
func rangeable(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return false
	}
	var idents []string
	switch n := p.Cmds[0].Args[0].(type) {
	case *parse.DotNode:
		return true
	case *parse.FieldNode:
		idents = n.Ident
	case *parse.VariableNode:
		idents = n.Ident
		if len(idents) == 1 && idents[0] != "$" {
			return false // a variable's value is not known here
		}
	case *parse.PipeNode:
		return rangeable(n)
	default:
		return false
	}
	return !intFields()[idents[len(idents)-1]]
}

// intFields are the names of Data's integer fields, anywhere in it.
var intFields = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				walk(t.Field(i).Type)
				switch t.Field(i).Type.Kind() {
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					out[t.Field(i).Name] = true
				}
			}
		case reflect.Slice:
			walk(t.Elem())
		}
	}
	walk(reflect.TypeFor[Data]())
	return out
})

func walkBranch(walk func(parse.Node, int) error, b *parse.BranchNode, depth int) error {
	if err := walk(b.Pipe, depth); err != nil {
		return err
	}
	if err := walk(b.List, depth); err != nil {
		return err
	}
	if b.ElseList != nil {
		return walk(b.ElseList, depth)
	}
	return nil
}

// Render runs a template on a message's data: the subject on one line, the HTML escaped by
// context, the text part as written (or derived from the HTML when the template has none).
// Each part is bounded by MaxOutput and the whole by ctx's deadline (DefaultTimeout when it
// sets none). A template that does not compile or run is a *FieldError naming its part.
func Render(ctx context.Context, t Template, d Data) (Rendered, error) {
	c, err := compile(t)
	if err != nil {
		return Rendered{}, err
	}
	return c.render(ctx, d)
}

// Preview is Render, for a template shown to its author with a real booking.
func Preview(ctx context.Context, t Template, d Data) (Rendered, error) { return Render(ctx, t, d) }

func (c *compiled) render(ctx context.Context, d Data) (Rendered, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	var out Rendered
	subject, err := run(ctx, FieldSubject, func(w io.Writer) error { return c.subject.Execute(w, d) })
	if err != nil {
		return Rendered{}, err
	}
	out.Subject = strings.Join(strings.Fields(subject), " ")
	if out.HTML, err = run(ctx, FieldHTML, func(w io.Writer) error { return c.html.Execute(w, d) }); err != nil {
		return Rendered{}, err
	}
	if c.text != nil {
		out.Text, err = run(ctx, FieldText, func(w io.Writer) error { return c.text.Execute(w, d) })
	} else {
		out.Text, err = run(ctx, FieldText, func(w io.Writer) error { return textOfHTML(w, out.HTML) })
	}
	if err != nil {
		return Rendered{}, err
	}
	return out, nil
}

// run executes one part into a writer bounded by MaxOutput, in its own goroutine so that
// the deadline is kept even though Go's templates cannot be cancelled: past the deadline
// run answers ErrTimeout and the writer refuses every later write, which ends the
// execution at its next output (a template cannot loop long without output: see check).
func run(ctx context.Context, field string, exec func(io.Writer) error) (string, error) {
	if ctx.Err() != nil {
		return "", &FieldError{Field: field, Message: ErrTimeout.Error(), Err: ErrTimeout}
	}
	w := &boundedWriter{max: MaxOutput}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("failed: %v", r)
			}
		}()
		done <- exec(w)
	}()
	select {
	case err := <-done:
		switch {
		case errors.Is(err, ErrTooLarge):
			return "", &FieldError{Field: field, Message: ErrTooLarge.Error(), Err: ErrTooLarge}
		case err != nil:
			return "", goError(field, err)
		}
		return w.buf.String(), nil
	case <-ctx.Done():
		w.stopped.Store(true)
		return "", &FieldError{Field: field, Message: ErrTimeout.Error(), Err: ErrTimeout}
	}
}

// boundedWriter keeps at most max bytes and stops taking any once stopped.
type boundedWriter struct {
	buf     bytes.Buffer
	max     int
	stopped atomic.Bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.stopped.Load() {
		return 0, ErrTimeout
	}
	if w.buf.Len()+len(p) > w.max {
		return 0, ErrTooLarge
	}
	return w.buf.Write(p)
}
