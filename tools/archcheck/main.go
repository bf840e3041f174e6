// Command archcheck holds the layering rule of every service: a domain package never depends,
// directly or through another package, on Fiber, the MongoDB driver, kafka-go,
// libs/mongostore, a store or a listed adapter. The domains and adapters are declared in
// domains.txt beside this file, which also states the rule; `make archcheck` (part of
// `make lint`) runs it from the repository root:
//
//	cd tools && GOWORK=off go run ./archcheck -root ..
//
// It asks `go list -deps -json` of the workspace (go.work at the root) once for all domains,
// then walks each domain's imports and prints, for every banned package it reaches, the
// chain of imports that leads there. It exits 1 when a domain breaks the rule or the
// declaration is wrong (a directory that is gone, a service with no line).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// vros is the module path prefix of the repository's own packages.
const vros = "github.com/vros/vros/"

// declFile is the declaration, relative to the repository root.
const declFile = "tools/archcheck/domains.txt"

func main() {
	root := flag.String("root", ".", "the repository root, holding go.work")
	overlay := flag.String("overlay", "", "an overlay for go list (`go help build`), as the tests plant imports")
	verbose := flag.Bool("v", false, "list the domains checked")
	flag.Parse()
	res, err := Check(*root, *overlay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "archcheck:", err)
		os.Exit(1)
	}
	if *verbose {
		for _, d := range res.Domains {
			fmt.Println("domain", d)
		}
	}
	res.Print(os.Stdout)
	if !res.OK() {
		os.Exit(1)
	}
}

// Decl is domains.txt: directories from the repository root.
type Decl struct {
	Domains  []string
	Adapters []string
	NoDomain map[string]string // service directory → why it has no domain
}

// ReadDecl reads the declaration at root/declFile.
func ReadDecl(root string) (Decl, error) {
	f, err := os.Open(filepath.Join(root, declFile))
	if err != nil {
		return Decl{}, err
	}
	defer f.Close()
	d := Decl{NoDomain: map[string]string{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("%s:%d: %s: %q", declFile, n, why, sc.Text()) }
		if len(fields) < 2 {
			return Decl{}, bad("a keyword and a directory")
		}
		dir := path.Clean(fields[1])
		switch fields[0] {
		case "domain":
			d.Domains = append(d.Domains, dir)
		case "adapter":
			d.Adapters = append(d.Adapters, dir)
		case "nodomain":
			if len(fields) < 3 {
				return Decl{}, bad("nodomain needs a reason")
			}
			d.NoDomain[dir] = strings.Join(fields[2:], " ")
		default:
			return Decl{}, bad("the keyword is domain, adapter or nodomain")
		}
		if len(fields) > 2 && fields[0] != "nodomain" {
			return Decl{}, bad("one directory per line")
		}
	}
	return d, sc.Err()
}

// Violation is a banned package that a domain reaches.
type Violation struct {
	Domain string   // the domain's directory
	Banned string   // the banned package's import path
	What   string   // which rule: "Fiber", "a store", …
	Chain  []string // import paths from the domain to Banned, both included
}

func (v Violation) String() string {
	chain := make([]string, len(v.Chain))
	for i, p := range v.Chain {
		chain[i] = strings.TrimPrefix(p, vros)
	}
	return fmt.Sprintf("%s imports %s (%s): %s", v.Domain, v.What, strings.TrimPrefix(v.Banned, vros), strings.Join(chain, " → "))
}

// Result is what Check found.
type Result struct {
	Domains    []string
	Services   int
	Violations []Violation
	Problems   []string // a wrong declaration, or errors of go list
}

// OK reports whether every domain keeps the rule and the declaration is sound.
func (r Result) OK() bool { return len(r.Violations) == 0 && len(r.Problems) == 0 }

// Print writes one line per violation and problem, or one line saying all is well.
func (r Result) Print(w io.Writer) {
	for _, v := range r.Violations {
		fmt.Fprintln(w, "archcheck:", v)
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "archcheck:", p)
	}
	if r.OK() {
		fmt.Fprintf(w, "archcheck: %d domain packages of %d services reach no Fiber, MongoDB driver, kafka-go or store (%s)\n", len(r.Domains), r.Services, declFile)
	}
}

// banned says which rule pkg breaks for a domain, or "".
func banned(pkg string, adapters map[string]bool) string {
	switch {
	case strings.HasPrefix(pkg, "github.com/gofiber/"):
		return "Fiber"
	case strings.HasPrefix(pkg, "go.mongodb.org/mongo-driver"):
		return "the MongoDB driver"
	case strings.HasPrefix(pkg, "github.com/segmentio/kafka-go"):
		return "kafka-go"
	case pkg == vros+"libs/mongostore" || strings.HasPrefix(pkg, vros+"libs/mongostore/"):
		return "libs/mongostore"
	case adapters[pkg]:
		return "an adapter"
	}
	if strings.HasPrefix(pkg, vros) {
		for _, elem := range strings.Split(strings.TrimPrefix(pkg, vros), "/") {
			if strings.HasSuffix(elem, "store") {
				return "a store"
			}
		}
	}
	return ""
}

// listed is one package of `go list -json`.
type listed struct {
	ImportPath string
	Dir        string
	Imports    []string
	Error      *struct{ Err string }
}

// Check reads the declaration under root and checks every domain it names. overlay, when
// not empty, is passed to go list as -overlay.
func Check(root, overlay string) (Result, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return Result{}, err
	}
	decl, err := ReadDecl(root)
	if err != nil {
		return Result{}, err
	}
	var res Result
	res.Domains = decl.Domains

	// Every directory named exists; every service has a line.
	for _, dir := range slices.Concat(decl.Domains, decl.Adapters) {
		if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
			res.Problems = append(res.Problems, fmt.Sprintf("%s names %s, which is no directory: update it", declFile, dir))
		}
	}
	services, err := services(root)
	if err != nil {
		return Result{}, err
	}
	res.Services = len(services)
	for _, svc := range services {
		_, none := decl.NoDomain[svc]
		if !none && !slices.ContainsFunc(decl.Domains, func(d string) bool { return strings.HasPrefix(d, svc+"/") }) {
			res.Problems = append(res.Problems, fmt.Sprintf("service %s has no line in %s: name its domain packages, or say why it has none (nodomain)", svc, declFile))
		}
	}
	if len(res.Problems) > 0 {
		return res, nil
	}

	// One go list for all: the domains, the adapters and everything they import.
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,Imports,Error"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	for _, dir := range slices.Concat(decl.Domains, decl.Adapters) {
		args = append(args, "./"+dir)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	// The workspace of the root, whatever the caller's (make runs this with GOWORK=off).
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*listed{}
	byDir := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return Result{}, fmt.Errorf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = &p
		byDir[p.Dir] = p.ImportPath
	}
	importPath := func(dir string) string { return byDir[filepath.Join(root, dir)] }
	adapters := map[string]bool{}
	for _, dir := range decl.Adapters {
		adapters[importPath(dir)] = true
	}

	for _, dir := range decl.Domains {
		start := importPath(dir)
		if start == "" {
			res.Problems = append(res.Problems, fmt.Sprintf("go list found no package in %s", dir))
			continue
		}
		// Breadth first, so that each chain is a shortest one; a banned package ends its
		// branch, so that Fiber is reported once rather than with each of its packages.
		from := map[string]string{start: ""}
		queue := []string{start}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if pkg := pkgs[p]; pkg != nil && pkg.Error != nil {
				res.Problems = append(res.Problems, fmt.Sprintf("%s: %s", strings.TrimPrefix(p, vros), pkg.Error.Err))
			}
			if what := banned(p, adapters); what != "" && p != start {
				var chain []string
				for q := p; q != ""; q = from[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				res.Violations = append(res.Violations, Violation{Domain: dir, Banned: p, What: what, Chain: chain})
				continue
			}
			if pkgs[p] == nil {
				continue
			}
			for _, imp := range pkgs[p].Imports {
				if _, seen := from[imp]; !seen {
					from[imp] = p
					queue = append(queue, imp)
				}
			}
		}
	}
	slices.Sort(res.Problems)
	res.Problems = slices.Compact(res.Problems)
	return res, nil
}

// services lists the service modules of the workspace: those of go.work with a service/
// directory, as directories from root.
func services(root string) ([]string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "work", "edit", "-json")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go work edit -json: %v", err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		return nil, err
	}
	var svcs []string
	for _, u := range work.Use {
		dir := path.Clean(u.DiskPath)
		if fi, err := os.Stat(filepath.Join(root, dir, "service")); err == nil && fi.IsDir() {
			svcs = append(svcs, dir)
		}
	}
	return svcs, nil
}
