// Reads the textual form written by ir/printer.cpp: a lexer that makes tokens
// on demand and a recursive-descent parser over them. Value names are only
// labels: each definition gets a fresh ValueId, and names follow block scoping
// (a region's values are not visible after it).
#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/passes.hpp"

namespace tj::ir {

ParseError::ParseError(int line, int col, const std::string& message)
    : Error(std::to_string(line) + ":" + std::to_string(col) + ": " + message), line(line), col(col) {}

namespace {

// A Shape is digits running into letters, like the "128x32xf32" in a tile type.
enum class Tok { Word, Shape, Int, Float, String, Value, Global, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // as spelled in the source, sigils and quotes included
  std::string str;   // a String's contents, escapes decoded
  int line = 1, col = 1;
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

std::string describe(const Token& t) { return t.kind == Tok::End ? "end of input" : "'" + t.text + "'"; }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next() {
    skipSpaceAndComments();
    Token t{Tok::End, "", "", line_, col_};
    size_t start = pos_;
    if (atEnd()) return t;
    t.kind = scan(t);
    t.text = std::string(src_.substr(start, pos_ - start));
    return t;
  }

 private:
  Tok scan(Token& t) {
    char c = peek();
    if (c == '"') {
      t.str = stringBody(t);
      return Tok::String;
    }
    if (isDigit(c) || (c == '-' && isDigit(peek(1)))) return number();
    if (isIdentStart(c)) {
      skipIdent();
      return Tok::Word;
    }
    if (c == '%' || c == '@') return sigilName(c);
    return punct(c);
  }

  bool atEnd() const { return pos_ >= src_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  char advance() {
    char c = src_[pos_++];
    if (c == '\n') ++line_, col_ = 1;
    else ++col_;
    return c;
  }
  [[noreturn]] void fail(const std::string& message) const { throw ParseError(line_, col_, message); }

  void skipSpaceAndComments() {
    while (!atEnd()) {
      if (peek() == '/' && peek(1) == '/')
        while (!atEnd() && peek() != '\n') advance();
      else if (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')
        advance();
      else
        return;
    }
  }

  void skipDigits() {
    while (isDigit(peek())) advance();
  }
  void skipIdent() {
    while (isIdentChar(peek())) advance();
  }

  // -?D+(.D+)?([eE][+-]?D+)?, or a Shape.
  Tok number() {
    if (peek() == '-') advance();
    skipDigits();
    bool isFloat = false;
    if (peek() == '.' && isDigit(peek(1))) {
      advance();
      skipDigits();
      isFloat = true;
    }
    bool signedExp = peek(1) == '+' || peek(1) == '-';
    if ((peek() == 'e' || peek() == 'E') && isDigit(peek(signedExp ? 2 : 1))) {
      advance();
      if (signedExp) advance();
      skipDigits();
      isFloat = true;
    }
    if (!isIdentChar(peek())) return isFloat ? Tok::Float : Tok::Int;
    skipIdent();
    return Tok::Shape;
  }

  std::string stringBody(const Token& start) {
    advance();
    std::string s;
    for (;;) {
      if (atEnd()) throw ParseError(start.line, start.col, "unterminated string");
      char c = advance();
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (atEnd()) continue;  // a trailing backslash: reported as unterminated
      char e = advance();
      if (e == 'n') s += '\n';
      else if (e == '"' || e == '\\') s += e;
      else fail("unknown escape '\\" + std::string(1, e) + "' in string");
    }
  }

  Tok sigilName(char sigil) {
    advance();
    if (!isIdentChar(peek())) fail(std::string("expected a name after '") + sigil + "'");
    skipIdent();
    return sigil == '%' ? Tok::Value : Tok::Global;
  }

  Tok punct(char c) {
    if (std::string_view("(){}<>[],:=^-").find(c) == std::string_view::npos) {
      bool printable = c > ' ' && c < 127;
      fail(printable ? "unexpected character '" + std::string(1, c) + "'"
                     : "unexpected byte " + std::to_string(static_cast<unsigned char>(c)));
    }
    advance();
    return Tok::Punct;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

// Bounds recursion so hostile input cannot overflow the stack.
constexpr size_t kMaxRegionDepth = 256;

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text), tok_(lex_.next()) {}

  Kernel run() {
    header();
    scopes_.emplace_back();
    body(k_.body);
    if (tok_.kind != Tok::End) failExpected("end of input");
    return std::move(k_);
  }

 private:
  // --- tokens ---
  Token take() {
    Token t = std::move(tok_);
    tok_ = next_ ? std::move(*next_) : lex_.next();
    next_.reset();
    return t;
  }
  const Token& lookahead() {
    if (!next_) next_ = lex_.next();
    return *next_;
  }
  static bool spells(const Token& t, std::string_view s) {
    return (t.kind == Tok::Punct || t.kind == Tok::Word) && t.text == s;
  }
  bool is(std::string_view s) const { return spells(tok_, s); }
  bool accept(std::string_view s) {
    if (!is(s)) return false;
    take();
    return true;
  }
  void expect(std::string_view s) {
    if (!accept(s)) failExpected("'" + std::string(s) + "'");
  }
  Token expect(Tok kind, const std::string& what) {
    if (tok_.kind != kind) failExpected(what);
    return take();
  }
  [[noreturn]] static void failAt(const Token& t, const std::string& message) {
    throw ParseError(t.line, t.col, message);
  }
  // Where a token is, for the verifier's and lowerings' errors.
  static SourceLoc locOf(const Token& t) { return SourceLoc{"", t.line, t.col}; }
  [[noreturn]] void failExpected(const std::string& what) const {
    failAt(tok_, "expected " + what + " but found " + describe(tok_));
  }

  // Parses `item (',' item)* close`, or just `close`.
  template <typename F>
  void list(std::string_view close, F&& item) {
    if (!accept(close)) {
      do item();
      while (accept(","));
      expect(close);
    }
  }

  // --- scalars ---
  template <typename T>
  static T number(const Token& t) {
    T v{};
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size()) failAt(t, "number out of range " + t.text);
    return v;
  }
  int count(const std::string& what) {
    Token t = expect(Tok::Int, what);
    int64_t v = number<int64_t>(t);
    if (v < 0 || v > std::numeric_limits<int>::max()) failAt(t, what + " out of range: " + t.text);
    return static_cast<int>(v);
  }
  static DType dtype(std::string_view name, int line, int col) {
    std::optional<DType> d = parseDType(name);
    if (!d) throw ParseError(line, col, "unknown dtype '" + std::string(name) + "'");
    return *d;
  }

  // i64 | tile<4x8xf32>
  Type type() {
    Token t = expect(Tok::Word, "a type");
    if (t.text != "tile") return Type{dtype(t.text, t.line, t.col), {}};
    expect("<");
    Token shape = expect(Tok::Shape, "a tile shape like 4x8xf32");
    expect(">");
    Type ty;
    size_t start = 0;
    for (size_t x; (x = shape.text.find('x', start)) != std::string::npos; start = x + 1) {
      Token dim = shape;
      dim.text = shape.text.substr(start, x - start);
      dim.col += static_cast<int>(start);
      bool digits = !dim.text.empty() && dim.text.find_first_not_of("0123456789") == std::string::npos;
      int64_t size = digits ? number<int64_t>(dim) : 0;
      if (size <= 0) failAt(dim, "expected a positive dimension but found '" + dim.text + "'");
      ty.shape.push_back(size);
    }
    ty.dtype = dtype(shape.text.substr(start), shape.line, shape.col + static_cast<int>(start));
    return ty;
  }

  AttrValue attrValue() {
    if (tok_.kind == Tok::Int) return number<int64_t>(take());
    if (tok_.kind == Tok::Float) return number<double>(take());
    if (tok_.kind == Tok::String) return take().str;
    if (accept("inf")) return std::numeric_limits<double>::infinity();
    if (accept("nan")) return std::numeric_limits<double>::quiet_NaN();
    if (accept("-")) {
      expect("inf");
      return -std::numeric_limits<double>::infinity();
    }
    if (accept("[")) {
      std::vector<int64_t> ints;
      list("]", [&] { ints.push_back(number<int64_t>(expect(Tok::Int, "an integer"))); });
      return ints;
    }
    failExpected("an attribute value");
  }

  // --- values ---
  std::optional<ValueId> lookup(const std::string& name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      if (auto it = scope->find(name); it != scope->end()) return it->second;
    return std::nullopt;
  }
  ValueId use() {
    Token t = expect(Tok::Value, "a value");
    std::optional<ValueId> v = lookup(t.text);
    if (!v) failAt(t, "use of undefined value " + t.text);
    return *v;
  }
  void bind(const Token& name, ValueId v) {
    if (lookup(name.text)) failAt(name, "redefinition of value " + name.text);
    scopes_.back().emplace(name.text, v);
  }

  // --- structure ---
  // kernel @name(a: tensor<f32, 2>, ..., s: f32, ...) grid N [warps W] {
  void header() {
    expect("kernel");
    k_.name = expect(Tok::Global, "a kernel name like @gemm").text.substr(1);
    expect("(");
    list(")", [&] { param(); });
    expect("grid");
    k_.gridLoc = locOf(tok_);
    k_.gridRank = count("a grid rank");
    if (is("warps")) {
      expect("warps");
      k_.warps = count("a warp count");
    }
    expect("{");
  }

  // `name: tensor<f32, 2>` or `name: f32`. Tensors come first, as the kernel
  // keeps them in two lists and prints them in that order.
  void param() {
    Token name = expect(Tok::Word, "a parameter name");
    expect(":");
    if (!accept("tensor")) {
      Token d = expect(Tok::Word, "'tensor' or a scalar dtype");
      k_.scalars.push_back({name.text, dtype(d.text, d.line, d.col), locOf(name)});
      return;
    }
    if (!k_.scalars.empty())
      failAt(name, "tensor parameter " + name.text + " after a scalar parameter; list tensors first");
    TensorParam p;
    p.name = name.text;
    p.loc = locOf(name);
    expect("<");
    Token d = expect(Tok::Word, "a dtype");
    p.dtype = dtype(d.text, d.line, d.col);
    expect(",");
    p.rank = count("a tensor rank");
    expect(">");
    k_.tensors.push_back(std::move(p));
  }

  // Ops up to and including the closing '}'.
  void body(Block& b) {
    while (!accept("}")) b.ops.push_back(op());
  }

  // { ^(%k: i64, ...): ops }
  Block region() {
    if (scopes_.size() > kMaxRegionDepth) failAt(tok_, "regions nested too deeply");
    expect("{");
    expect("^");
    scopes_.emplace_back();
    Block b;
    expect("(");
    list(")", [&] {
      Token name = expect(Tok::Value, "a block argument");
      expect(":");
      b.args.push_back(k_.addValue(type()));
      bind(name, b.args.back());
    });
    expect(":");
    body(b);
    scopes_.pop_back();
    return b;
  }

  void attrs(Op& op) {
    expect("{");
    list("}", [&] {
      Token name = expect(Tok::Word, "an attribute name");
      const AttrSpec* spec = opInfo(op.code).attrSpec(name.text);
      if (!spec) failAt(name, std::string(opName(op.code)) + " takes no attribute '" + name.text + "'");
      if (std::any_of(op.attrs.begin(), op.attrs.end(), [&](const Attr& a) { return a.name == name.text; }))
        failAt(name, "duplicate attribute '" + name.text + "'");
      expect("=");
      Token at = tok_;
      AttrValue value = attrValue();
      if (!admits(spec->kind, value))
        failAt(at, "attribute '" + name.text + "' of " + std::string(opName(op.code)) + " must be " +
                       std::string(attrKindName(spec->kind)));
      op.setAttr(name.text, std::move(value));
    });
  }

  // [%r, ... =] name(%a, ...) [{attrs}] [: types] [regions]
  Op op() {
    std::vector<Token> names;
    if (tok_.kind == Tok::Value) {
      do names.push_back(expect(Tok::Value, "a result value"));
      while (accept(","));
      expect("=");
    }
    Token name = expect(Tok::Word, names.empty() ? "an op or '}'" : "an op name");
    std::optional<OpCode> code = parseOpName(name.text);
    if (!code) failAt(name, "unknown op '" + name.text + "'");
    Op op{};
    op.code = *code;
    op.loc = locOf(name);
    expect("(");
    list(")", [&] { op.operands.push_back(use()); });
    if (is("{") && !spells(lookahead(), "^")) attrs(op);
    if (!names.empty()) expect(":");
    for (size_t i = 0; i < names.size(); ++i) {
      if (i) expect(",");
      op.results.push_back(k_.addValue(type()));
    }
    while (is("{")) op.regions.push_back(region());
    // Bound after the regions: an op's results are not visible in its own body.
    for (size_t i = 0; i < names.size(); ++i) bind(names[i], op.results[i]);
    return op;
  }

  Lexer lex_;
  Token tok_;
  std::optional<Token> next_;
  Kernel k_;
  std::vector<std::unordered_map<std::string, ValueId>> scopes_;
};

}  // namespace

Kernel parse(std::string_view text) { return Parser(text).run(); }

}  // namespace tj::ir
