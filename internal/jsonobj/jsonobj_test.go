package jsonobj_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/jsonobj"
)

func TestObjectKeepsOrder(t *testing.T) {
	o := jsonobj.Object{{Key: "z", Value: 1}, {Key: "a", Value: "x\"y"}, {Key: "m", Value: nil}}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.Equal(t, `{"z":1,"a":"x\"y","m":null}`, string(b))

	b, err = json.Marshal(jsonobj.Object{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
}

func TestObjectNested(t *testing.T) {
	o := jsonobj.Object{{Key: "outer", Value: jsonobj.Object{{Key: "b", Value: true}, {Key: "a", Value: []int{1}}}}}
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.Equal(t, `{"outer":{"b":true,"a":[1]}}`, string(b))
}

func TestObjectMarshalError(t *testing.T) {
	_, err := json.Marshal(jsonobj.Object{{Key: "f", Value: func() {}}})
	assert.Error(t, err)
}

func TestObjectWithSetGet(t *testing.T) {
	base := jsonobj.Object{{Key: "id", Value: "1"}}
	more := base.With(jsonobj.Field{Key: "n", Value: 2})
	assert.Len(t, base, 1, "With leaves the receiver alone")
	assert.Len(t, more, 2)

	more = more.Set("n", 3).Set("new", "v")
	v, ok := more.Get("n")
	assert.True(t, ok)
	assert.Equal(t, 3, v)
	_, ok = more.Get("missing")
	assert.False(t, ok)
	b, err := json.Marshal(more)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"1","n":3,"new":"v"}`, string(b))
}
