package ingest

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Bounds of what the CSV import reads: one unbalanced quote must not swallow the
// rest of the file, and one huge line must not take the machine's memory.
const (
	// MaxCSVLineBytes caps a physical line; a longer one is skipped (read through
	// to its end in bounded chunks) and quarantined with its line number.
	MaxCSVLineBytes = 256 << 10
	// MaxCSVRecordLines is how many physical lines one quoted field may span; past
	// it, the record's first line is taken as an unbalanced quote and quarantined,
	// and reading goes on at the next line.
	MaxCSVRecordLines = 8
	// MaxCSVFieldBytes caps one field of a record.
	MaxCSVFieldBytes = MaxFieldBytes
)

// csvLine is one physical line of a CSV file.
type csvLine struct {
	text    string
	n       int  // 1-based line number
	tooLong bool // longer than MaxCSVLineBytes: text is its start
	size    int  // its length in bytes (tooLong)
}

// csvRecords reads CSV records line by line, with recovery: a record is the lines
// a quoted field spans (at most MaxCSVRecordLines), a record that does not parse is
// returned as an error with its first line number and text, and reading resumes at
// the line after the first line of a record whose quotes never balance.
type csvRecords struct {
	br     *bufio.Reader
	n      int
	queue  []csvLine // lines read ahead, to be read again
	fields []string
	eof    bool
}

func newCSVRecords(r io.Reader) *csvRecords {
	return &csvRecords{br: bufio.NewReaderSize(r, MaxCSVLineBytes)}
}

// csvBadRecord is a record that could not be read; reading goes on after it.
type csvBadRecord struct {
	Line int
	Raw  string
	Err  error
}

func (e *csvBadRecord) Error() string { return fmt.Sprintf("csv line %d: %v", e.Line, e.Err) }

func (c *csvRecords) line() (csvLine, error) {
	if len(c.queue) > 0 {
		l := c.queue[0]
		c.queue = c.queue[1:]
		return l, nil
	}
	if c.eof {
		return csvLine{}, io.EOF
	}
	c.n++
	b, err := c.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		l := csvLine{n: c.n, tooLong: true, text: string(b[:min(len(b), 200)]), size: len(b)}
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = c.br.ReadSlice('\n')
			l.size += len(b)
		}
		if err == io.EOF {
			c.eof = true
		} else if err != nil {
			return l, err
		} else {
			l.size-- // its newline
		}
		return l, nil
	case err == io.EOF:
		c.eof = true
		if len(b) == 0 {
			return csvLine{}, io.EOF
		}
	case err != nil:
		return csvLine{}, err
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	return csvLine{text: string(b), n: c.n}, nil
}

// Read returns the next record's fields (valid until the next Read) and its first
// line number; a *csvBadRecord for one that cannot be read, io.EOF at the end.
func (c *csvRecords) Read() ([]string, int, error) {
	first, err := c.line()
	if err != nil {
		return nil, 0, err
	}
	if first.tooLong {
		return nil, first.n, &csvBadRecord{Line: first.n, Raw: first.text,
			Err: fmt.Errorf("line is %d bytes long, more than %d", first.size, MaxCSVLineBytes)}
	}
	if first.text == "" {
		return c.Read() // blank lines are skipped, as encoding/csv does
	}
	if strings.IndexByte(first.text, '"') < 0 {
		// No quote: the fields are the text between commas.
		c.fields = c.fields[:0]
		rest := first.text
		for {
			i := strings.IndexByte(rest, ',')
			if i < 0 {
				c.fields = append(c.fields, rest)
				break
			}
			c.fields = append(c.fields, rest[:i])
			rest = rest[i+1:]
		}
		return c.fields, first.n, c.checkFields(first)
	}
	text, lines := first.text, []csvLine{first}
	for strings.Count(text, `"`)%2 == 1 && len(lines) < MaxCSVRecordLines {
		next, err := c.line()
		if err != nil {
			break
		}
		if next.tooLong {
			c.queue = append([]csvLine{next}, c.queue...)
			break
		}
		text += "\n" + next.text
		lines = append(lines, next)
	}
	if strings.Count(text, `"`)%2 == 1 {
		// The quote never closes: only the first line is the broken record, the
		// lines after it are read again.
		c.queue = append(append([]csvLine{}, lines[1:]...), c.queue...)
		return nil, first.n, &csvBadRecord{Line: first.n, Raw: first.text, Err: errors.New("unbalanced quote")}
	}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, first.n, &csvBadRecord{Line: first.n, Raw: text, Err: err}
	}
	if _, err := r.Read(); err != io.EOF {
		// Two records where one was expected: a quote closed a line early.
		return nil, first.n, &csvBadRecord{Line: first.n, Raw: text, Err: errors.New("unbalanced quote")}
	}
	c.fields = rec
	return rec, first.n, c.checkFields(first)
}

func (c *csvRecords) checkFields(first csvLine) error {
	for i, f := range c.fields {
		if len(f) > MaxCSVFieldBytes {
			return &csvBadRecord{Line: first.n, Raw: first.text,
				Err: fmt.Errorf("field %d is %d bytes long, more than %d", i+1, len(f), MaxCSVFieldBytes)}
		}
	}
	return nil
}
