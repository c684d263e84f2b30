package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// EventWriter takes the events of an Auditor, one stage at a time. The
// event belongs to the caller again once WriteEvent returns.
type EventWriter interface {
	WriteEvent(ev *auditv1.Event) error
}

// jsonLines writes each event as one line of JSON: upstream's log backend
// with --audit-log-format=json.
type jsonLines struct {
	mu  sync.Mutex
	out io.Writer
}

// NewJSONLines returns an EventWriter that writes one JSON object per line
// to out, each with a single Write call.
func NewJSONLines(out io.Writer) EventWriter {
	return &jsonLines{out: out}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (j *jsonLines) WriteEvent(ev *auditv1.Event) error {
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	// Encoding needs no lock; only the lines must not interleave.
	if err := json.NewEncoder(buf).Encode(ev); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, err := j.out.Write(buf.Bytes())
	return err
}

// LogFile says where the JSON lines go and when the file is rotated,
// as upstream's --audit-log-* flags.
type LogFile struct {
	// Path is the file, or "-" for standard output.
	Path string
	// MaxSizeMB rotates the file once it reaches this size; 0 never
	// rotates.
	MaxSizeMB int
	// MaxBackups is how many rotated files are kept; 0 keeps all.
	MaxBackups int
	// MaxAgeDays removes rotated files older than this, by the time in
	// their names; 0 keeps them regardless of age.
	MaxAgeDays int
}

// Open opens the log for appending. Rotated files are named as upstream's
// (through the same library): PATH's base name with the rotation time,
// e.g. audit-2026-11-22T10-04-05.123.log.
func (f LogFile) Open() (io.WriteCloser, error) {
	if f.MaxSizeMB < 0 || f.MaxBackups < 0 || f.MaxAgeDays < 0 {
		return nil, fmt.Errorf("audit log: --audit-log-maxsize, --audit-log-maxbackup and --audit-log-maxage can't be negative numbers")
	}
	if f.Path == "-" {
		return nopCloser{os.Stdout}, nil
	}
	// The file is created up front, private to the server, so that a bad
	// path fails start-up rather than the first request.
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	file, err := os.OpenFile(f.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if f.MaxSizeMB == 0 {
		return file, nil
	}
	file.Close()
	return &lumberjack.Logger{
		Filename:   f.Path,
		MaxSize:    f.MaxSizeMB,
		MaxBackups: f.MaxBackups,
		MaxAge:     f.MaxAgeDays,
	}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
