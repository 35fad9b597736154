package textsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// JSON rewrites a JSON document with every string (values and keys) passed
// through Clean with no cap: a tool's answer read by an agent or shown to its user
// holds no control character, bidi override or other invisible character, and no
// value spans lines. Order, numbers (as written) and structure are kept; the output
// is compact.
func JSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(doc))
	type frame struct {
		obj bool
		n   int // tokens written in it: keys and values of an object, elements of an array
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		switch {
		case f.n == 0:
		case f.obj && f.n%2 == 1:
			out.WriteByte(':')
		default:
			out.WriteByte(',')
		}
		f.n++
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return nil, err
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '}' || v == ']' {
				stack = stack[:len(stack)-1]
				out.WriteByte(byte(v))
				continue
			}
			sep()
			out.WriteByte(byte(v))
			stack = append(stack, frame{obj: v == '{'})
			continue
		case string:
			sep()
			b, err := json.Marshal(Clean(v, 0))
			if err != nil {
				return nil, err
			}
			out.Write(b)
		case json.Number:
			sep()
			out.WriteString(v.String())
		case bool:
			sep()
			if v {
				out.WriteString("true")
			} else {
				out.WriteString("false")
			}
		case nil:
			sep()
			out.WriteString("null")
		}
	}
	return out.Bytes(), nil
}
