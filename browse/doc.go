// Package browse is what people browsing a database read (the web page):
// pages of capsules, thoughts and entities, a capsule's observations, the
// pins in force, the scope values in use, and code memory's repositories,
// entities and episodes. The Engine serves it over its store; the root
// package keeps aliases of its types.
package browse
