package mcpcore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Fuzz targets for the parsers that read what servers send and had none: the stdio frame reader, the id
// salvaged from a bad frame, and the normalisation of a 2026-07-28 result's input requests. Run with, e.g.:
//
//	go test ./mcpcore/ -run '^$' -fuzz FuzzReadFrame -fuzztime 1m

// FuzzReadFrame: readFrame splits a server's stdout into its lines whatever the bytes, the buffer size and
// the limit: a line within the limit comes back trimmed, a longer one as a bounded prefix marked oversized,
// and size is the line's full length (0 for a blank one).
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1}\n  \n{\"a\":2}\r\nlast"), uint16(64), uint8(16))
	f.Add(bytes.Repeat([]byte("x"), 5000), uint16(10), uint8(16))
	f.Add([]byte("\n\n\r\n"), uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint16, bufSize uint8) {
		br := bufio.NewReaderSize(bytes.NewReader(data), int(bufSize)) // bufio's minimum is 16
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for i := 0; ; i++ {
			line, size, oversized, err := readFrame(br, int(max), nil)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("frame %d: %v", i, err)
			}
			if i == len(lines) {
				if len(line) != 0 || size != 0 || !errors.Is(err, io.EOF) {
					t.Fatalf("past the last line: %q, size %d, %v", line, size, err)
				}
				return
			}
			raw := lines[i]
			switch {
			case len(raw) > int(max)+2:
				if !oversized || size != len(raw) || len(line) > 4<<10 || !bytes.HasPrefix(raw, line) {
					t.Fatalf("frame %d (%d bytes, limit %d): oversized %v, size %d, %d bytes kept", i, len(raw), max, oversized, size, len(line))
				}
			case oversized:
				t.Fatalf("frame %d (%d bytes, limit %d) marked oversized", i, len(raw), max)
			case !bytes.Equal(line, bytes.TrimSpace(raw)):
				t.Fatalf("frame %d = %q, want %q", i, line, bytes.TrimSpace(raw))
			case len(line) == 0 && size != 0, len(line) > 0 && size != len(raw):
				t.Fatalf("frame %d: size %d of a %d-byte line %q", i, size, len(raw), line)
			}
			if err != nil {
				if i != len(lines)-1 {
					t.Fatalf("frame %d: %v before the last line", i, err)
				}
				return
			}
		}
	})
}

// FuzzSalvageID: whatever a bad frame holds, salvageID does not panic and an id it finds is a valid one.
func FuzzSalvageID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a\"b","method":"x","params":{`))
	f.Add([]byte(`{"id": -12, "result": [1, 2`))
	f.Add([]byte(`{"id":99999999999999999999999}`))
	f.Fuzz(func(t *testing.T, prefix []byte) {
		id, isRequest, ok := salvageID(prefix)
		if ok && !id.IsValid() {
			t.Errorf("%q: ok with an invalid id", prefix)
		}
		if ok && isRequest != methodPattern.Match(prefix) {
			t.Errorf("%q: isRequest %v", prefix, isRequest)
		}
	})
}

// FuzzSalvageIDFindsTheID: the id of a frame cut short after its id — a string of any content or an integer
// — is found, the same id the frame names.
func FuzzSalvageIDFindsTheID(f *testing.F) {
	f.Add("req-1", int64(0), true, []byte(`"method":"sampling/createMessage","params":{"x":`))
	f.Add("", int64(-7), false, []byte(`"result":{`))
	f.Fuzz(func(t *testing.T, s string, n int64, isString bool, tail []byte) {
		var want jsonrpc.ID
		var lit []byte
		if isString {
			lit, _ = json.Marshal(s)
			var back string
			_ = json.Unmarshal(lit, &back) // invalid UTF-8 comes back as U+FFFD, as a server's frame would
			want, _ = jsonrpc.MakeID(back)
		} else {
			lit, _ = json.Marshal(n)
			want, _ = jsonrpc.MakeID(float64(n))
		}
		frame := append(append([]byte(`{"jsonrpc":"2.0","id":`), lit...), ',')
		frame = append(frame, tail...)
		id, _, ok := salvageID(frame)
		if !ok || id != want {
			t.Errorf("%q: salvaged %v (ok %v), want %v", frame, id.Raw(), ok, want.Raw())
		}
	})
}

// FuzzNormalizeInputRequests: a result normalised has every input request with params, keeps every other
// key, and is left alone by a second pass; one not changed comes back nil.
func FuzzNormalizeInputRequests(f *testing.F) {
	f.Add([]byte(`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":{"method":"x","params":null}},"requestState":"s"}`))
	f.Add([]byte(`{"inputRequests":{"a":{"method":"roots/list","params":{}}}}`))
	f.Add([]byte(`{"inputRequests":{"a":null}}`))
	f.Fuzz(func(t *testing.T, result []byte) {
		out, changed := normalizeInputRequests(result)
		if !changed {
			if out != nil {
				t.Fatalf("%q: unchanged, but returned %q", result, out)
			}
			return
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal(result, &before) != nil || json.Unmarshal(out, &after) != nil {
			t.Fatalf("%q → %q: not both JSON objects", result, out)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after))) {
			t.Fatalf("%q → %q: keys changed", result, out)
		}
		var reqs map[string]map[string]json.RawMessage
		if err := json.Unmarshal(after["inputRequests"], &reqs); err != nil {
			t.Fatalf("%q: inputRequests %v", out, err)
		}
		for k, r := range reqs {
			if p, ok := r["params"]; r != nil && (!ok || string(bytes.TrimSpace(p)) == "null") {
				t.Errorf("%q: input request %q still has no params", out, k)
			}
		}
		if again, changed := normalizeInputRequests(out); changed {
			t.Errorf("%q → %q: a second pass changed it again", out, again)
		}
	})
}
