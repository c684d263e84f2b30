// Package logs reads the container log files a CRI runtime writes
// (`TIMESTAMP STREAM TAG MESSAGE` per line, TAG F for a full line and P for
// a partial one) and renders them as `kubectl logs` expects: partial lines
// joined, optional timestamps, since, tail and byte limits, and follow.
package logs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Options select what part of a log is returned, as v1.PodLogOptions do.
type Options struct {
	// Follow keeps reading as the file grows until the container stops.
	Follow bool
	// TailLines, when set, starts that many lines before the end.
	TailLines *int64
	// Timestamps prefixes each line with its RFC3339Nano time and a space.
	Timestamps bool
	// Since drops lines written before it (zero keeps all).
	Since time.Time
	// LimitBytes, when set, stops after that many bytes, even mid-line.
	LimitBytes *int64
}

// FromPodLogOptions converts the API's options; now anchors sinceSeconds.
func FromPodLogOptions(o *corev1.PodLogOptions, now time.Time) Options {
	opts := Options{Follow: o.Follow, TailLines: o.TailLines, Timestamps: o.Timestamps, LimitBytes: o.LimitBytes}
	switch {
	case o.SinceSeconds != nil:
		opts.Since = now.Add(-time.Duration(*o.SinceSeconds) * time.Second)
	case o.SinceTime != nil:
		opts.Since = o.SinceTime.Time
	}
	return opts
}

// Entry is one parsed line of a CRI log file.
type Entry struct {
	Time    time.Time
	Stream  string // "stdout" or "stderr"
	Partial bool
	// Message excludes the line's newline; a full line adds one back.
	Message []byte
}

// ParseLine parses one line of a CRI log file, without its trailing
// newline.
func ParseLine(line []byte) (Entry, error) {
	var e Entry
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return e, fmt.Errorf("log line %q: no timestamp", line)
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return e, fmt.Errorf("log line timestamp: %w", err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok || (string(stream) != "stdout" && string(stream) != "stderr") {
		return e, fmt.Errorf("log line %q: no stream", line)
	}
	tag, msg, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		// An empty message may come without the separator.
		tag, msg = rest, nil
	}
	switch string(tag) {
	case "F":
	case "P":
		e.Partial = true
	default:
		return e, fmt.Errorf("log line %q: unknown tag %q", line, tag)
	}
	e.Time, e.Stream, e.Message = t, string(stream), msg
	return e, nil
}

// errLimit ends a read once limitBytes have been written.
var errLimit = errors.New("log byte limit reached")

// writer renders entries: it joins partial lines per stream, decides
// since and timestamps at the start of each joined line, and cuts at the
// byte limit.
type writer struct {
	out        io.Writer
	opts       Options
	remain     int64 // bytes left; <0 unlimited
	midLine    map[string]bool
	keepStream map[string]bool // whether the current joined line passed since
}

func newWriter(out io.Writer, opts Options) *writer {
	w := &writer{out: out, opts: opts, remain: -1, midLine: map[string]bool{}, keepStream: map[string]bool{}}
	if opts.LimitBytes != nil {
		w.remain = *opts.LimitBytes
	}
	return w
}

func (w *writer) write(e Entry) error {
	start := !w.midLine[e.Stream]
	w.midLine[e.Stream] = e.Partial
	if start {
		w.keepStream[e.Stream] = w.opts.Since.IsZero() || !e.Time.Before(w.opts.Since)
	}
	if !w.keepStream[e.Stream] {
		return nil
	}
	var line []byte
	if start && w.opts.Timestamps {
		line = append(line, e.Time.UTC().Format(time.RFC3339Nano)...)
		line = append(line, ' ')
	}
	line = append(line, e.Message...)
	if !e.Partial {
		line = append(line, '\n')
	}
	if w.remain == 0 {
		return errLimit
	}
	if w.remain > 0 && int64(len(line)) > w.remain {
		line = line[:w.remain]
	}
	n, err := w.out.Write(line)
	if err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	if w.remain > 0 {
		w.remain -= int64(n)
		if w.remain == 0 {
			return errLimit
		}
	}
	return nil
}

// tailOffset returns the offset of the first of the last n joined lines
// in r: a line ends after an F entry, and trailing P entries count as one
// more (unfinished) line.
func tailOffset(r io.Reader, n int64) (int64, error) {
	if n <= 0 {
		// Nothing wanted: start at the end.
		return io.Copy(io.Discard, r)
	}
	starts := make([]int64, 0, n+1) // ring of the last n line starts
	push := func(off int64) {
		if int64(len(starts)) == n {
			starts = append(starts[:0], starts[1:]...)
		}
		starts = append(starts, off)
	}
	br := bufio.NewReader(r)
	var off int64
	inLine := false
	for {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 && raw[len(raw)-1] == '\n' {
			e, perr := ParseLine(raw[:len(raw)-1])
			if perr == nil {
				if !inLine {
					push(off)
				}
				inLine = e.Partial
			}
			off += int64(len(raw))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("read log: %w", err)
		}
	}
	if len(starts) == 0 {
		return off, nil
	}
	return starts[0], nil
}

// Read writes the log at path to out as opts select. With opts.Follow it
// keeps reading as the file grows (and follows a rotation to a new file)
// until running reports false and the file is drained, or ctx ends.
func Read(ctx context.Context, path string, opts Options, out io.Writer, running func(context.Context) (bool, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer func() { f.Close() }()
	if opts.TailLines != nil {
		off, err := tailOffset(f, *opts.TailLines)
		if err != nil {
			return err
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return fmt.Errorf("seek log: %w", err)
		}
	}
	w := newWriter(out, opts)
	br := bufio.NewReader(f)
	var pending []byte // a line read before its newline was written
	for {
		raw, rerr := br.ReadBytes('\n')
		pending = append(pending, raw...)
		if len(pending) > 0 && pending[len(pending)-1] == '\n' {
			e, perr := ParseLine(pending[:len(pending)-1])
			pending = pending[:0]
			if perr == nil {
				if err := w.write(e); err != nil {
					if errors.Is(err, errLimit) {
						return nil
					}
					return err
				}
			}
		}
		if rerr == nil {
			continue
		}
		if !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("read log: %w", rerr)
		}
		if !opts.Follow {
			return nil
		}
		// At the end of the file: stop once the container is gone and
		// what it wrote is drained, else wait for more.
		if rotated(f, path) && len(pending) == 0 {
			nf, err := os.Open(path)
			if err == nil {
				f.Close()
				f = nf
				br.Reset(f)
				continue
			}
		}
		alive, err := running(ctx)
		if err != nil {
			return fmt.Errorf("container state: %w", err)
		}
		if !alive {
			return drain(br, pending, w)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pollInterval):
		}
	}
}

// pollInterval is how often a followed log is checked for new lines.
const pollInterval = 100 * time.Millisecond

// drain writes what the runtime wrote between the last read and the
// container's exit.
func drain(br *bufio.Reader, pending []byte, w *writer) error {
	rest, err := io.ReadAll(br)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	for _, line := range bytes.SplitAfter(append(pending, rest...), []byte{'\n'}) {
		if len(line) == 0 || line[len(line)-1] != '\n' {
			continue
		}
		e, perr := ParseLine(line[:len(line)-1])
		if perr != nil {
			continue
		}
		if err := w.write(e); err != nil {
			if errors.Is(err, errLimit) {
				return nil
			}
			return err
		}
	}
	return nil
}

// rotated reports whether path now names another file than f (the
// runtime renamed the log away and started a new one).
func rotated(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	return !os.SameFile(a, b)
}
