package server

import (
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// MaxNestingDepth bounds how deeply a request may nest, the same on REST and gRPC: on REST the body's JSON
// objects and arrays (the request object itself is level 1), on gRPC the request's messages, each
// google.protobuf.Struct and ListValue counting one level and a Value none — so tool arguments nested as deep as
// the limit allows are accepted by both. A deeper request is INVALID_ARGUMENT naming the limit, checked before
// anything walks it (REST: on the body's bytes, before it is parsed; gRPC: before the UTF-8 check and the
// handler). It is a constant, not a setting: no MCP tool's arguments come near it, and many servers fail far
// below a thousand levels. It is mcpcore.MaxNestingDepth, the one limit the core applies to what it forwards
// and to what servers answer.
const MaxNestingDepth = mcpcore.MaxNestingDepth

// CheckDepth returns TooDeep when m nests deeper than MaxNestingDepth (see there how levels count), and nil
// otherwise. It never descends below the limit, so its work is bounded by the message's size.
func CheckDepth(m proto.Message) error {
	if !withinDepth(m.ProtoReflect(), 0) {
		return TooDeep()
	}
	return nil
}

// withinDepth reports whether m, at depth (the levels above it), stays within MaxNestingDepth. It runs on
// every request, so it walks only what can nest: a Struct, ListValue or Value by their Go types, and by
// reflection only the fields of a message whose type can hold one (staticDepth).
func withinDepth(m protoreflect.Message, depth int) bool {
	switch v := m.Interface().(type) {
	case *structpb.Struct:
		return structWithin(v, depth)
	case *structpb.ListValue:
		return listWithin(v, depth)
	case *structpb.Value:
		return valueWithin(v, depth)
	}
	md := m.Descriptor()
	if depth+staticDepth(md) <= MaxNestingDepth {
		return true // the type cannot nest deeper than that, whatever its fields hold
	}
	depth++
	if depth > MaxNestingDepth {
		return false
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		k := fd.Kind()
		if fd.IsMap() {
			k = fd.MapValue().Kind()
		}
		if k != protoreflect.MessageKind && k != protoreflect.GroupKind || !m.Has(fd) {
			continue
		}
		ok := true
		switch v := m.Get(fd); {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && ok; i++ {
				ok = withinDepth(l.Get(i).Message(), depth)
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				ok = withinDepth(mv.Message(), depth)
				return ok
			})
		default:
			ok = withinDepth(v.Message(), depth)
		}
		if !ok {
			return false
		}
	}
	return true
}

// structWithin, listWithin and valueWithin are withinDepth for the JSON-like types, without reflection: a
// Struct and a ListValue are a level each (valuesWithin), a Value none.
func structWithin(s *structpb.Struct, depth int) bool {
	return valuesWithin(maps.Values(s.GetFields()), depth)
}

func listWithin(l *structpb.ListValue, depth int) bool {
	return valuesWithin(slices.Values(l.GetValues()), depth)
}

// valuesWithin is the level of a Struct or ListValue at depth whose values are vs.
func valuesWithin(vs iter.Seq[*structpb.Value], depth int) bool {
	if depth++; depth > MaxNestingDepth {
		return false
	}
	for v := range vs {
		if !valueWithin(v, depth) {
			return false
		}
	}
	return true
}

func valueWithin(v *structpb.Value, depth int) bool {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		return structWithin(k.StructValue, depth)
	case *structpb.Value_ListValue:
		return listWithin(k.ListValue, depth)
	}
	return true
}

// unboundedDepth is staticDepth's answer for a type that can nest without limit.
const unboundedDepth = math.MaxInt32

// staticDepths caches staticDepth by message type (protoreflect.MessageDescriptor → int).
var staticDepths sync.Map

// staticDepth is the most levels a message of type md spans, itself included, whatever its fields hold
// (counted as withinDepth counts), or unboundedDepth when it can hold a Struct, ListValue or Value, or
// itself.
func staticDepth(md protoreflect.MessageDescriptor) int {
	if d, ok := staticDepths.Load(md); ok {
		return d.(int)
	}
	d := typeDepth(md, map[protoreflect.FullName]bool{})
	staticDepths.Store(md, d)
	return d
}

func typeDepth(md protoreflect.MessageDescriptor, onPath map[protoreflect.FullName]bool) int {
	name := md.FullName()
	switch {
	case name == "google.protobuf.Struct", name == "google.protobuf.ListValue", name == "google.protobuf.Value", onPath[name]:
		return unboundedDepth
	}
	onPath[name] = true
	defer delete(onPath, name)
	deepest := 0
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			continue
		}
		d := typeDepth(fd.Message(), onPath)
		if d == unboundedDepth {
			return unboundedDepth
		}
		deepest = max(deepest, d)
	}
	return 1 + deepest
}

// CheckUTF8 returns INVALID_ARGUMENT, with a google.rpc.BadRequest violation naming each field (by its proto
// path, as "session_id" or "arguments.fields[k]"), when a string field of m holds invalid UTF-8, and nil
// otherwise. Protobuf cannot carry such a string: a REST path or query parameter like "/v1/sessions/s-%ff"
// would otherwise fail when the gateway marshals the request, as INTERNAL. The gateway runs it on every
// request before sending it, after CheckDepth.
//
// Its work is linear in the message's size: the walk keeps the path as a stack of segments and renders it
// only for a violation (building every field's path as a string cost memory in the square of the depth). It
// walks a Struct, ListValue or Value, which hold a call's arguments, by their Go types, and other messages by
// reflection.
func CheckUTF8(m proto.Message) error {
	c := utf8Check{path: make([]pathSeg, 0, 8)}
	c.message(m.ProtoReflect())
	if len(c.vs) > 0 {
		return invalidArgument(c.vs...)
	}
	return nil
}

// maxUTF8Violations bounds the violations one request reports.
const maxUTF8Violations = 20

// utf8Check is one CheckUTF8 walk: the path to the value it is at, and the violations found.
type utf8Check struct {
	path []pathSeg
	vs   []mcpcore.FieldViolation
}

// pathSeg is one segment of a utf8Check's path: a field's name (".name" after the first segment), a list's
// index ("[3]") or a map's key ("[\"key\"]").
type pathSeg struct {
	name  string // the field's name or the map's key
	index int
	kind  uint8 // segField, segIndex or segKey
}

const (
	segField uint8 = iota
	segIndex
	segKey
)

func (c *utf8Check) violation(desc string) {
	if len(c.vs) >= maxUTF8Violations {
		return
	}
	var b strings.Builder
	for i, s := range c.path {
		switch s.kind {
		case segField:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		case segIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		case segKey:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(s.name))
			b.WriteByte(']')
		}
	}
	c.vs = append(c.vs, mcpcore.FieldViolation{Field: b.String(), Description: desc})
}

func (c *utf8Check) push(s pathSeg) { c.path = append(c.path, s) }
func (c *utf8Check) pop()           { c.path = c.path[:len(c.path)-1] }

// validKey reports whether a map key is valid UTF-8, noting a violation when not.
func (c *utf8Check) validKey(key string) bool {
	if utf8.ValidString(key) {
		return true
	}
	c.violation("a key is not valid UTF-8")
	return false
}

func (c *utf8Check) message(m protoreflect.Message) {
	switch v := m.Interface().(type) {
	case *structpb.Struct:
		c.structFields(v)
		return
	case *structpb.ListValue:
		c.listValues(v)
		return
	case *structpb.Value:
		c.structValue(v)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		c.push(pathSeg{name: string(fd.Name())})
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				c.push(pathSeg{kind: segIndex, index: i})
				c.value(fd, l.Get(i))
				c.pop()
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if key := k.String(); c.validKey(key) {
					c.push(pathSeg{kind: segKey, name: key})
					c.value(fd.MapValue(), mv)
					c.pop()
				}
				return true
			})
		default:
			c.value(fd, v)
		}
		c.pop()
		return true
	})
}

func (c *utf8Check) value(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			c.violation("not valid UTF-8")
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		c.message(v.Message())
	}
}

// structFields, listValues and structValue walk a Struct, ListValue and Value as message would by
// reflection, with the same paths ("fields[\"k\"].list_value.values[0].string_value").
func (c *utf8Check) structFields(s *structpb.Struct) {
	c.push(pathSeg{name: "fields"})
	for k, v := range s.GetFields() {
		if c.validKey(k) {
			c.push(pathSeg{kind: segKey, name: k})
			c.structValue(v)
			c.pop()
		}
	}
	c.pop()
}

func (c *utf8Check) listValues(l *structpb.ListValue) {
	c.push(pathSeg{name: "values"})
	for i, v := range l.GetValues() {
		c.push(pathSeg{kind: segIndex, index: i})
		c.structValue(v)
		c.pop()
	}
	c.pop()
}

func (c *utf8Check) structValue(v *structpb.Value) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if !utf8.ValidString(k.StringValue) {
			c.push(pathSeg{name: "string_value"})
			c.violation("not valid UTF-8")
			c.pop()
		}
	case *structpb.Value_StructValue:
		c.push(pathSeg{name: "struct_value"})
		c.structFields(k.StructValue)
		c.pop()
	case *structpb.Value_ListValue:
		c.push(pathSeg{name: "list_value"})
		c.listValues(k.ListValue)
		c.pop()
	}
}
