package server

import (
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// CheckUTF8 returns INVALID_ARGUMENT, with a google.rpc.BadRequest violation naming each field (by its proto
// path, as "session_id" or "arguments.fields[k]"), when a string field of m holds invalid UTF-8, and nil
// otherwise. Protobuf cannot carry such a string: a REST path or query parameter like "/v1/sessions/s-%ff"
// would otherwise fail when the gateway marshals the request, as INTERNAL. The gateway runs it on every
// request before sending it.
func CheckUTF8(m proto.Message) error {
	var vs []mcpcore.FieldViolation
	checkUTF8(m.ProtoReflect(), "", &vs)
	if len(vs) > 0 {
		return invalidArgument(vs...)
	}
	return nil
}

func checkUTF8(m protoreflect.Message, path string, vs *[]mcpcore.FieldViolation) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := joinField(path, string(fd.Name()))
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				checkUTF8Value(fd, l.Get(i), name+"["+strconv.Itoa(i)+"]", vs)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				key := k.String()
				if !utf8.ValidString(key) {
					*vs = append(*vs, mcpcore.FieldViolation{Field: name, Description: "a key is not valid UTF-8"})
					return true
				}
				checkUTF8Value(fd.MapValue(), mv, name+"["+strconv.Quote(key)+"]", vs)
				return true
			})
		default:
			checkUTF8Value(fd, v, name, vs)
		}
		return true
	})
}

func checkUTF8Value(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string, vs *[]mcpcore.FieldViolation) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "not valid UTF-8"})
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		checkUTF8(v.Message(), path, vs)
	}
}
