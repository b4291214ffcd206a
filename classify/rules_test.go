package classify

import (
	"reflect"
	"testing"
)

// TestEveryPatternCompiles compiles each rule's pattern now, since patterns
// otherwise compile when first used and a typo would wait for the screen
// that reaches it.
func TestEveryPatternCompiles(t *testing.T) {
	var walk func(v reflect.Value)
	n := 0
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if p, ok := v.Interface().(*pattern); ok {
				n++
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("pattern %q: %v", p.expr, r)
					}
				}()
				p.re()
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			if !v.CanAddr() { // a struct held in an interface: copy it
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			for i := range v.NumField() {
				f := v.Field(i)
				// Reach unexported fields through their address.
				walk(reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	for _, a := range agents {
		walk(reflect.ValueOf(a).Elem())
	}
	if n < 30 {
		t.Errorf("found %d patterns in the tables; the walk missed some", n)
	}
}
