// Package otaschema validates OpenTravel messages against the OpenTravel 2015A schemas
// (xsd/, a copy of ../shared/vendor/opentravel-2015A; docs/channels.md). Go has no maintained
// XSD validator, so the validation is the JDK's (javax.xml.validation): Start runs
// Validator.java as a child process (`java Validator.java`, single-file source launch, no
// build step) that keeps each message's schema once loaded, and Validate hands it one
// message at a time.
//
// A message is validated against the schema named like its root element
// (OTA_HotelAvailNotifRQ → xsd/OTA_HotelAvailNotifRQ.xsd); a SOAP 1.1 envelope is accepted,
// its Body's single element being the message (the Header is not validated: WS-Security has
// no schema here).
package otaschema

import (
	"bufio"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

//go:embed Validator.java xsd
var files embed.FS

// Error is a message the schema refuses: one problem per line, "line:column: message"
// (the line and column of the message as given, envelope included).
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return "OpenTravel schema: " + strings.Join(e.Problems, "; ")
}

// Validator is a running validation process. Safe for concurrent use (the messages are
// validated one at a time).
type Validator struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	dir    string
	broken error
	stderr *limitedWriter
}

// Messages are the messages vros and pmsXchange exchange: what a test of that exchange
// preloads (Start(otaschema.Messages...)).
var Messages = []string{
	"OTA_HotelAvailNotifRQ", "OTA_HotelAvailNotifRS", "OTA_HotelRateAmountNotifRQ", "OTA_HotelRateAmountNotifRS",
	"OTA_HotelResNotifRQ", "OTA_HotelResNotifRS", "OTA_HotelResModifyNotifRQ", "OTA_HotelResModifyNotifRS",
}

// Start starts a validator. A message's schema is loaded on first use of its type (a second
// or two each), then kept for the process's life; the schemas of preload (root element
// names) are loaded at once, in the background, in that order.
func Start(preload ...string) (*Validator, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("otaschema: a JDK (java 17 or newer) is needed: %w", err)
	}
	dir, err := os.MkdirTemp("", "otaschema-")
	if err != nil {
		return nil, err
	}
	if err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, p), 0o755)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	}); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := append([]string{"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m", "Validator.java", "xsd"}, preload...)
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	stderr := &limitedWriter{n: 16 << 10}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("otaschema: start java: %w", err)
	}
	return &Validator{cmd: cmd, in: in, out: bufio.NewReader(out), dir: dir, stderr: stderr}, nil
}

// Validate checks one message (an OTA element, or a SOAP envelope holding one): nil when
// the schema accepts it, an *Error listing the problems when it does not, another error when
// the validator itself failed.
func (v *Validator) Validate(xml []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.broken != nil {
		return v.broken
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(xml)))
	if _, err := v.in.Write(append(n[:], xml...)); err != nil {
		return v.fail(err)
	}
	if _, err := io.ReadFull(v.out, n[:]); err != nil {
		return v.fail(err)
	}
	answer := make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(v.out, answer); err != nil {
		return v.fail(err)
	}
	if string(answer) == "OK" {
		return nil
	}
	return &Error{Problems: strings.Split(string(answer), "\n")}
}

func (v *Validator) fail(err error) error {
	v.broken = fmt.Errorf("otaschema: the validator process failed: %v: %s", err, v.stderr.String())
	return v.broken
}

// Close stops the process and removes its files.
func (v *Validator) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.broken == nil {
		v.broken = errors.New("otaschema: closed")
	}
	v.in.Close()
	err := v.cmd.Wait()
	os.RemoveAll(v.dir)
	return err
}

type limitedWriter struct {
	mu sync.Mutex
	b  strings.Builder
	n  int
}

func (w *limitedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rest := w.n - w.b.Len(); rest > 0 {
		if len(p) > rest {
			w.b.Write(p[:rest])
		} else {
			w.b.Write(p)
		}
	}
	return len(p), nil
}
