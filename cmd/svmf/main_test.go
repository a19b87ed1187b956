package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSimSOR(t *testing.T) {
	var out, errOut bytes.Buffer
	_, err := run([]string{"sim", "sor", "-np", "4", "-rows", "64", "-cols", "256", "-iterations", "3", "-page-size", "512", "-variant", "nonzero"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	assert.Contains(t, out.String(), "SOR-NonZero: 64 × 256 float32 on 4 ranks")
	// Four ranks: a barrier costs 2(4-1) = 6 messages.
	assert.Contains(t, out.String(), "barrier messages per barrier: 6 (2(n-1) = 6)")
	assert.NotContains(t, out.String(), "TreadMarks", "no published figure for this size")
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"sim"}, "name a program"},
		{[]string{"sim", "sor", "-frob"}, "flag provided but not defined: -frob"},
		{[]string{"sim", "lu"}, `unknown program "lu"`},
		{[]string{"sim", "sor", "-variant", "red"}, `-variant "red"`},
		{[]string{"sim", "sor", "-rows", "2"}, "2 × 3072 matrix on 8 ranks"},
		{[]string{"sim", "sor", "-cols", "7"}, "× 7 matrix"},
		{[]string{"sim", "sor", "-iterations", "0"}, "0 iterations"},
		{[]string{"sim", "sor", "extra"}, `unexpected argument "extra"`},
		{[]string{"sim", "sor", "-np", "x"}, "invalid value"},
		{[]string{"sim", "sor", "-rows", "1000000"}, "more than the 8 GiB limit"},
	} {
		var out, errOut bytes.Buffer
		_, err := run(tc.args, &out, &errOut)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error()+errOut.String(), tc.want, "%v", tc.args)
	}
}
