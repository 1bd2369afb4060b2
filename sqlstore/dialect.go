package sqlstore

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/memory"
)

// Dialect is what differs between the engines in the SQL this package
// writes, and how their errors classify. Each store declares one value.
type Dialect struct {
	// Arrays says a list binds as one array argument ("col = ANY(?)"),
	// not as a placeholder per value ("col IN (?, ?)").
	Arrays bool
	// ForUpdate and ForShare end a SELECT whose rows stay locked (for
	// writing, or against writers) until the transaction ends: "" where
	// write transactions take turns anyway.
	ForUpdate, ForShare string
	// Greatest names the function of the larger of two values.
	Greatest string
	// IndexedBy is the clause after a table's name that makes a query
	// read it through the named index, where the planner would not pick
	// it unprompted ("" for none).
	IndexedBy func(index string) string
	// Current is the condition of the inner_voice session that is its
	// scope's current one, as the unique index of current sessions
	// states it (an upsert's conflict target must repeat it).
	Current string
	// ContainsFold is a condition: column col contains the statement's
	// next argument, ASCII letters compared without case.
	ContainsFold func(col string) string
	// JSONListHas is a condition: the JSON list of strings in column col
	// holds the statement's next argument.
	JSONListHas func(col string) string
	// MembersJSON is the expression of capsule c's observation ids, in
	// order, as a JSON list.
	MembersJSON string
	// RedactDerived forgets the summary thoughts derived from a thought,
	// and those derived from them (?1 the thought, ?2 the text that
	// replaces theirs), but not the thought itself.
	RedactDerived string
	// RelogRenamed are statements that log an entity's observations and
	// edges as changed (their texts quote its name; ?1 the entity).
	RelogRenamed []string
	// InList is a condition: column col is among the ids of list
	// argument ?n (which ListArg makes), however many they are.
	InList func(col string, n int) string
	// ListArg is the argument of an InList list.
	ListArg func(ids []string) any
	// ListMax is how many ids one InList list holds at most.
	ListMax int
	// MemberJoin joins an observation x to its capsule membership m
	// (capsule_id, position; NULL when it has none).
	MemberJoin string
	// VectorJoin joins record x of a kind to its vector e in the space
	// of arguments ?first (provider), ?first+1 (model), ?first+2 (dim);
	// its vector column is VectorColumn, NULL when it has none.
	VectorJoin   func(kind string, first int) string
	VectorColumn string
	// ScanVector returns a destination for one row's vector column.
	ScanVector func() VectorScan
	// LockKeys, when set, takes a transaction lock on each (repository,
	// key) pair of a kind (what), so concurrent writers of one key wait
	// for each other.
	LockKeys func(ctx context.Context, q Querier, what string, keys [][2]string) error

	// IsUnique reports a unique or primary key violation.
	IsUnique func(error) bool
	// IsForeignKey reports a foreign key violation.
	IsForeignKey func(error) bool
	// Constraint names the constraint an error violated ("" when the
	// engine does not say).
	Constraint func(error) string
	// Error keeps typed errors and turns anything else into a db_error
	// naming what (never the SQL).
	Error func(err error, what string) error
}

// NotFound is the not_found error of a record of kind what.
func NotFound(what, id string) error {
	return memory.Errorf(memory.CodeNotFound, "%s %q not found", what, id)
}

// invalidParams is an invalid_params error.
func invalidParams(format string, args ...any) error {
	return memory.Errorf(memory.CodeInvalidParams, format, args...)
}

// AtRecord names the record of an import a typed error is about
// (section "" leaves it unnamed); other errors (the database's) pass
// unchanged.
func AtRecord(section memory.Section, i int, err error) error {
	var me *memory.Error
	if section == "" || !errors.As(err, &me) {
		return err
	}
	return &memory.RecordError{Section: section, Index: i, Err: err}
}

// lockKeys runs the dialect's LockKeys, if it has one.
func (d *Dialect) lockKeys(ctx context.Context, q Querier, what string, keys [][2]string) error {
	if d.LockKeys == nil || len(keys) == 0 {
		return nil
	}
	return d.LockKeys(ctx, q, what, keys)
}
