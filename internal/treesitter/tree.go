package treesitter

// Tree is the syntax tree of one file: its visible nodes (named and
// anonymous, as tree-sitter's API shows them) in pre-order. It holds no
// reference to the parser and is safe to read from several goroutines.
type Tree struct {
	grammar *grammar
	nodes   []node
}

// node is one node of a Tree.
type node struct {
	start, end uint32 // byte offsets, end exclusive
	next       int32  // index of the first node after this one's subtree
	parent     int32  // -1 for the root
	prev       int32  // previous sibling, -1 for none
	symbol     uint16
	field      uint8
	flags      uint8
}

// Node flags, as scripts/treesitter/cairn.c writes them.
const (
	flagNamed    = 1
	flagMissing  = 2
	flagExtra    = 4
	flagHasError = 8
)

// symbolError is the kind of ERROR nodes.
const symbolError = 0xFFFF

// Node is a node of a Tree, or the null node (the zero value), which
// every method accepts: a null node has no kind, children or siblings.
type Node struct {
	t *Tree
	i int32
}

// Root returns the tree's root node.
func (t *Tree) Root() Node {
	if t == nil || len(t.nodes) == 0 {
		return Node{}
	}
	return Node{t, 0}
}

// Len is the number of nodes in the tree.
func (t *Tree) Len() int { return len(t.nodes) }

// FieldID returns the number of a field name in the tree's grammar, 0
// when the grammar has no such field.
func (t *Tree) FieldID(name string) uint8 {
	if t == nil {
		return 0
	}
	return t.grammar.fields[name]
}

func (n Node) at(i int32) Node {
	if i < 0 {
		return Node{}
	}
	return Node{n.t, i}
}

func (n Node) raw() *node { return &n.t.nodes[n.i] }

// IsNull reports whether n is the null node.
func (n Node) IsNull() bool { return n.t == nil }

// Kind is the node's type ("function_definition", "identifier", "(" or
// "ERROR"); "" for the null node.
func (n Node) Kind() string {
	if n.t == nil {
		return ""
	}
	s := n.raw().symbol
	if s == symbolError {
		return "ERROR"
	}
	if int(s) < len(n.t.grammar.kinds) {
		return n.t.grammar.kinds[s]
	}
	return ""
}

func (n Node) flag(f uint8) bool { return n.t != nil && n.raw().flags&f != 0 }

// IsNamed reports whether the node is named in the grammar (not a bare
// token such as "(" or "def").
func (n Node) IsNamed() bool { return n.flag(flagNamed) }

// IsMissing reports whether the parser inserted the node to recover from
// a syntax error: it has no text.
func (n Node) IsMissing() bool { return n.flag(flagMissing) }

// IsExtra reports whether the node may appear anywhere (a comment).
func (n Node) IsExtra() bool { return n.flag(flagExtra) }

// IsError reports whether the node is an ERROR node.
func (n Node) IsError() bool { return n.t != nil && n.raw().symbol == symbolError }

// HasError reports whether the node is, or holds, an ERROR or a MISSING
// node.
func (n Node) HasError() bool { return n.flag(flagHasError) }

// StartByte is the offset of the node's first byte.
func (n Node) StartByte() int {
	if n.t == nil {
		return 0
	}
	return int(n.raw().start)
}

// EndByte is the offset just past the node's last byte.
func (n Node) EndByte() int {
	if n.t == nil {
		return 0
	}
	return int(n.raw().end)
}

// Parent returns the node's parent (null for the root).
func (n Node) Parent() Node {
	if n.t == nil {
		return Node{}
	}
	return n.at(n.raw().parent)
}

// FirstChild returns the node's first child, named or not.
func (n Node) FirstChild() Node {
	if n.t == nil || n.i+1 >= n.raw().next {
		return Node{}
	}
	return Node{n.t, n.i + 1}
}

// NextSibling returns the node after n in its parent, named or not.
func (n Node) NextSibling() Node {
	if n.t == nil {
		return Node{}
	}
	r := n.raw()
	if r.parent < 0 || r.next >= n.t.nodes[r.parent].next {
		return Node{}
	}
	return Node{n.t, r.next}
}

// PrevSibling returns the node before n in its parent, named or not.
func (n Node) PrevSibling() Node {
	if n.t == nil {
		return Node{}
	}
	return n.at(n.raw().prev)
}

// FirstNamedChild returns the node's first named child.
func (n Node) FirstNamedChild() Node {
	c := n.FirstChild()
	for !c.IsNull() && !c.IsNamed() {
		c = c.NextSibling()
	}
	return c
}

// NextNamedSibling returns the first named node after n in its parent.
func (n Node) NextNamedSibling() Node {
	c := n.NextSibling()
	for !c.IsNull() && !c.IsNamed() {
		c = c.NextSibling()
	}
	return c
}

// PrevNamedSibling returns the last named node before n in its parent.
func (n Node) PrevNamedSibling() Node {
	c := n.PrevSibling()
	for !c.IsNull() && !c.IsNamed() {
		c = c.PrevSibling()
	}
	return c
}

// ChildCount is the number of the node's children, named or not.
func (n Node) ChildCount() int {
	k := 0
	for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
		k++
	}
	return k
}

// Child returns the node's i-th child (from 0), named or not.
func (n Node) Child(i int) Node {
	c := n.FirstChild()
	for ; !c.IsNull() && i > 0; i-- {
		c = c.NextSibling()
	}
	if i != 0 {
		return Node{}
	}
	return c
}

// NamedChildCount is the number of the node's named children.
func (n Node) NamedChildCount() int {
	k := 0
	for c := n.FirstNamedChild(); !c.IsNull(); c = c.NextNamedSibling() {
		k++
	}
	return k
}

// NamedChild returns the node's i-th named child (from 0).
func (n Node) NamedChild(i int) Node {
	c := n.FirstNamedChild()
	for ; !c.IsNull() && i > 0; i-- {
		c = c.NextNamedSibling()
	}
	if i != 0 {
		return Node{}
	}
	return c
}

// NamedChildren returns the node's named children in order.
func (n Node) NamedChildren() []Node {
	var out []Node
	for c := n.FirstNamedChild(); !c.IsNull(); c = c.NextNamedSibling() {
		out = append(out, c)
	}
	return out
}

// FieldID is the field the node fills in its parent (0 for none).
func (n Node) FieldID() uint8 {
	if n.t == nil {
		return 0
	}
	return n.raw().field
}

// ChildByField returns the node's first child in the field numbered id
// (see Tree.FieldID), or null.
func (n Node) ChildByField(id uint8) Node {
	if id == 0 {
		return Node{}
	}
	for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
		if c.raw().field == id {
			return c
		}
	}
	return Node{}
}

// ChildrenByField returns the node's children in the field numbered id.
func (n Node) ChildrenByField(id uint8) []Node {
	if id == 0 {
		return nil
	}
	var out []Node
	for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
		if c.raw().field == id {
			out = append(out, c)
		}
	}
	return out
}

// ChildByFieldName is ChildByField for a field given by name.
func (n Node) ChildByFieldName(name string) Node {
	return n.ChildByField(n.t.FieldID(name))
}

// ChildrenByFieldName is ChildrenByField for a field given by name.
func (n Node) ChildrenByFieldName(name string) []Node {
	return n.ChildrenByField(n.t.FieldID(name))
}
