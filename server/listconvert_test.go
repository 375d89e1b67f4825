package server

import (
	"errors"
	"fmt"
	"testing"
)

func TestProtoMemo(t *testing.T) {
	type in struct{ n int }
	type out struct{ s string }
	memo := &protoMemo[in, out]{m: map[*in]*out{}}
	calls := 0
	conv := func(k *in) (*out, error) {
		calls++
		if k.n < 0 {
			return nil, errors.New("negative")
		}
		return &out{fmt.Sprint(k.n)}, nil
	}
	a, b := &in{1}, &in{1}
	a1, _ := memo.convert(a, conv)
	a2, _ := memo.convert(a, conv)
	b1, _ := memo.convert(b, conv) // an equal but different object is converted on its own
	if a1 != a2 || a1 == b1 || calls != 2 || a1.s != "1" {
		t.Fatalf("a1=%p a2=%p b1=%p calls=%d", a1, a2, b1, calls)
	}
	bad := &in{-1}
	for range 2 {
		if _, err := memo.convert(bad, conv); err == nil {
			t.Fatal("no error")
		}
	}
	if calls != 4 {
		t.Errorf("a failed conversion was remembered: %d calls", calls)
	}
	for i := range maxProtoMemo + 5 {
		if _, err := memo.convert(&in{i}, conv); err != nil {
			t.Fatal(err)
		}
	}
	if len(memo.m) > maxProtoMemo {
		t.Errorf("%d kept, want at most %d", len(memo.m), maxProtoMemo)
	}
}
