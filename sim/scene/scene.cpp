// Loading scenes and building their orchestration libraries (scene.h).
#include "sim/scene/scene.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include "models/common/errors.h"
#include "sim/json/json_getters.h"
#include "sim/json/json_input.h"
#include "sim/json/json_read.h"
#include "sim/json/json_util.h"
#include "sim/config/run_options.h"
#include "sim/host/interrupt.h"
#include "sim/host/subprocess.h"
#include "sim/scene/scene_source.h"
#include "sim/trace/json_doc.h"

extern char** environ;

namespace fs = std::filesystem;

namespace npusim::scene {

namespace {

using J = nlohmann::ordered_json;
using json_input::check_keys;
using json_input::pointer_join;

[[noreturn]] void fail(const std::string& file, const std::string& path, const std::string& msg) {
  throw InputError(file, path, msg);
}

std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// A temporary file removed when it goes out of scope, and by the interrupt
// handler if npusim is interrupted first.
class TempFile {
 public:
  explicit TempFile(std::string path)
      : path_(std::move(path)), handle_(host::interrupt::remember(host::interrupt::Kind::File, path_)) {}
  ~TempFile() {
    ::unlink(path_.c_str());
    host::interrupt::forget(handle_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int handle_;
};

// Runs argv (no shell); its standard output and error are returned in `out`.
// The command runs under the runner's guard (npusim-orch-runner --guard) in
// a process group of its own: killed whole if npusim is interrupted, and by
// the guard, with `temp_files` removed, if npusim dies.
int run_command(const std::vector<std::string>& argv, std::string& out, const std::vector<std::string>& temp_files = {}) {
  std::error_code tmp_ec;
  fs::path tmp_dir = fs::temp_directory_path(tmp_ec);  // $TMPDIR; /tmp if it names no folder
  if (tmp_ec) tmp_dir = "/tmp";
  const std::string tmpl_path = (tmp_dir / "npusim-cc-XXXXXX").string();
  std::vector<char> tmpl(tmpl_path.begin(), tmpl_path.end());
  tmpl.push_back('\0');
  const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) {
    out = "cannot create a temporary file in " + tmp_dir.string() + ": " + std::strerror(errno);
    return -1;
  }
  const TempFile log(tmpl.data());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  const std::string guard = runner_path();
  std::vector<std::string> full = {guard, "--guard", std::to_string(::getpid()), log.path()};
  full.insert(full.end(), temp_files.begin(), temp_files.end());
  full.push_back("--");
  full.insert(full.end(), argv.begin(), argv.end());
  auto spawn = [&](const std::vector<std::string>& cmd, bool search) {
    std::vector<char*> args;
    for (const std::string& a : cmd) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int err = (search ? posix_spawnp : posix_spawn)(&pid, args[0], &fa, &attr, args.data(), environ);
    return std::make_pair(err, pid);
  };
  auto [err, pid] = spawn(full, false);
  if (err != 0) std::tie(err, pid) = spawn(argv, true);  // no runner: unguarded (an interruption still kills it)
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  int status = -1;
  if (err == 0) {
    host::interrupt::add_group(pid);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    ::kill(-pid, SIGKILL);  // what the compiler left running (its group is still addressable: not yet reaped)
    host::interrupt::remove_group(pid);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(fd);
  std::ifstream in(log.path(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  if (err != 0) {
    out = std::string("cannot run ") + argv[0] + ": " + std::strerror(err);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string cache_dir() {
  if (const char* d = std::getenv("NPUSIM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/npusim";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/npusim";
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  return ((ec ? fs::path("/tmp") : tmp) / "npusim-cache").string();
}

std::string compiler() {
  if (const char* c = std::getenv("CXX"); c && *c) return c;
  return "g++";
}

std::string first_lines(const std::string& text, int n) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  int k = 0;
  while (std::getline(in, line)) {
    if (k++ == n) {
      out += "...\n";
      break;
    }
    out += line + "\n";
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// ---- the scene document ----------------------------------------------------------
class SceneLoader {
 public:
  SceneLoader(std::string file, SceneDef& def, trace::Trace& t) : file_(std::move(file)), json_(file_), d_(def), t_(t) {}

  void load(const J& root, const std::string& default_name) {
    check_keys(root, file_, "", {"npusim_scene", "name", "orchestration", "incores", "calibration", "args", "run"});
    const J& version = need(root, "", "npusim_scene");
    if (!version.is_number_integer() || version.get<std::int64_t>() != 1)
      fail(file_, "/npusim_scene", "expected 1 (the scene format version), got " + json_input::describe_json(version));
    d_.file = file_;
    d_.dir = fs::path(file_).parent_path().string();
    t_.file = file_;
    t_.name = default_name;
    if (const J* n = get(root, "name")) {
      if (!n->is_string() || n->get_ref<const std::string&>().empty())
        fail(file_, "/name", "expected a non-empty string, got " + json_input::describe_json(*n));
      t_.name = n->get<std::string>();
    }
    if (const J* run = get(root, "run")) t_.run = config::parse_run_block(*run, file_, "/run");
    orchestration(need(root, "", "orchestration"));
    std::unordered_map<int, std::pair<double, double>> calib;
    if (const J* c = get(root, "calibration")) calib = calibration(*c);
    incores(need(root, "", "incores"), calib);
    args(need(root, "", "args"));
  }

 private:
  // A member or nullptr; a required member ("expected an object", "missing key").
  static const J* get(const J& obj, const char* key) { return json_input::Getters<J>::opt(obj, key); }
  const J& need(const J& obj, const std::string& path, const char* key) const { return json_.field(obj, path, key); }
  std::string resolve(const std::string& p) const {
    fs::path q(p);
    if (q.is_relative() && !d_.dir.empty()) q = fs::path(d_.dir) / q;
    return fs::absolute(q).lexically_normal().string();
  }
  std::string string(const J& v, const std::string& path) const {
    if (!v.is_string() || v.get_ref<const std::string&>().empty())
      fail(file_, path, "expected a non-empty string, got " + json_input::describe_json(v));
    return v.get<std::string>();
  }

  void orchestration(const J& o) {
    const std::string p = "/orchestration";
    if (!o.is_object()) fail(file_, p, "expected an object, got " + json_input::describe_json(o));
    check_keys(o, file_, p, {"source", "library", "entry", "config"});
    const int forms = o.contains("source") + o.contains("library");
    if (forms != 1) fail(file_, p, "expected exactly one of \"source\" (a .cpp file) or \"library\" (a shared object)");
    if (const J* s = get(o, "source")) {
      d_.source = resolve(string(*s, pointer_join(p, "source")));
      if (const std::string why = json_input::not_a_regular_file(d_.source, "C++ source file"); !why.empty())
        fail(file_, pointer_join(p, "source"), why + ": " + d_.source);
      json_input::note_input(d_.source);
    }
    if (const J* l = get(o, "library")) {
      d_.library = resolve(string(*l, pointer_join(p, "library")));
      if (const std::string why = json_input::not_a_regular_file(d_.library, "shared object"); !why.empty())
        fail(file_, pointer_join(p, "library"), why + ": " + d_.library);
      json_input::note_input(d_.library);
    }
    if (const J* e = get(o, "entry")) d_.entry = string(*e, pointer_join(p, "entry"));
    if (const J* c = get(o, "config")) d_.config = string(*c, pointer_join(p, "config"));
  }

  // `func_id mean_ns sigma_ns` lines; `#` starts a comment.
  std::unordered_map<int, std::pair<double, double>> calibration(const J& v) {
    const std::string path = resolve(string(v, "/calibration"));
    // A folder would read as no lines, /dev/zero as one endless line.
    if (const std::string why = json_input::not_a_regular_file(path, "calibration file"); !why.empty() && why != "no such file")
      fail(file_, "/calibration", why + ": " + path);
    std::ifstream in(path);
    if (!in) fail(file_, "/calibration", "cannot open the calibration file " + path);
    json_input::note_input(path);
    std::unordered_map<int, std::pair<double, double>> out;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::size_t hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      std::istringstream ls(line);
      std::string a, b, c, extra;
      if (!(ls >> a)) continue;
      const std::string where = path + ":" + std::to_string(n);
      ls >> b >> c;
      std::size_t ua = 0, ub = 0, uc = 0;
      long id = -1;
      double mean = -1, sigma = -1;
      try {
        id = std::stol(a, &ua);
        mean = std::stod(b, &ub);
        sigma = std::stod(c, &uc);
      } catch (const std::exception&) {
        ua = 0;
      }
      if (ua != a.size() || ub != b.size() || uc != c.size() || (ls >> extra) || id < 0 || id > 0x7fffffff ||
          !(mean >= 0 && mean <= trace::kMaxDuration) || !(sigma >= 0 && sigma <= trace::kMaxDuration))
        throw InputError(where, "", "expected \"func_id mean_ns sigma_ns\" (a func_id and two numbers in [0, 3.6e12]), got \"" +
                                        line + "\"");
      if (!out.emplace(static_cast<int>(id), std::make_pair(mean, sigma)).second)
        throw InputError(where, "", "func_id " + a + " is calibrated twice");
    }
    return out;
  }

  // Incores are trace kernel definitions of one core type, plus `writes`.
  void incores(const J& v, const std::unordered_map<int, std::pair<double, double>>& calib) {
    const std::string p = "/incores";
    if (!v.is_object()) fail(file_, p, "expected an object, got " + json_input::describe_json(v));
    J defs = J::object();
    std::vector<std::string> names;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (json_input::is_annotation_key(it.key())) {
        // Ignored, as every `x_` key is; kept to explain a func_id the program then lacks.
        if (const J* f = it.value().is_object() ? get(it.value(), "func_id") : nullptr; f && f->is_number_integer())
          d_.annotated_incores.emplace(static_cast<int>(f->get<std::int64_t>()), it.key());
        continue;
      }
      const std::string ip = pointer_join(p, it.key());
      const J& def = it.value();
      if (!def.is_object()) fail(file_, ip, "expected an object, got " + json_input::describe_json(def));
      check_keys(def, file_, ip, {"func_id", "core", "duration", "body", "pipes", "writes"});
      if (const J* core = get(def, "core"); core && *core == "mix")
        fail(file_, pointer_join(ip, "core"), "an incore runs on one core type: expected \"aic\" or \"aiv\" (a MIX task is "
                                              "a submit of MixedKernels naming one incore per lane)");
      J k = def;
      k.erase("writes");
      std::int64_t id = -1;
      if (const J* f = get(def, "func_id")) json_input::json_int64(*f, id);
      auto c = calib.find(static_cast<int>(id));
      if (c != calib.end()) {
        if (def.contains("body"))
          fail(file_, pointer_join(ip, "body"), "func_id " + std::to_string(id) +
                                                    " has a calibration line and a body: give its time in one place");
        k.erase("duration");
        k["duration"] = {{"mean_ns", c->second.first}, {"sigma_ns", c->second.second}};
        if (c->second.second == 0) k["duration"] = {{"ns", c->second.first}};
      } else if (!def.contains("duration") && !def.contains("body")) {
        fail(file_, ip, "incore \"" + it.key() + "\" has no duration, no body and no calibration line");
      }
      defs[it.key()] = k;
      names.push_back(it.key());
    }
    // (a calibrated duration was checked with its line)
    std::vector<std::unique_ptr<KernelDef>> kernels = trace::parse_kernels(defs, file_, p);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      Incore in;
      in.kernel = kernels[i].get();
      in.json = defs[names[i]].dump();
      if (const J* w = get(v.at(names[i]), "writes")) {
        in.writes = writes(*w, pointer_join(pointer_join(p, names[i]), "writes"));
        in.declares_writes = true;
      }
      d_.incores.push_back(std::move(in));
      t_.kernels.push_back(std::move(kernels[i]));
    }
  }

  // [{"arg", "index" | "element", "value"}] with expressions over s0..s15 and block_num.
  std::vector<IncoreWrite> writes(const J& v, const std::string& p) const {
    if (!v.is_array()) fail(file_, p, "expected a list, got " + json_input::describe_json(v));
    auto names = [](const std::string& n) -> int {
      if (n == "block_num") return 16;
      if (n.size() >= 2 && n[0] == 's' && n.find_first_not_of("0123456789", 1) == std::string::npos && n.size() <= 3) {
        const int k = std::stoi(n.substr(1));
        return k < 16 ? k : -1;
      }
      return -1;
    };
    auto expr = [&](const J& e, const std::string& ep) {
      std::int64_t i = 0;
      if (json_input::json_int64(e, i)) return Expr::constant(i);
      if (!e.is_string()) fail(file_, ep, "expected an integer or an expression string, got " + json_input::describe_json(e));
      try {
        return Expr::parse(e.get<std::string>(), names);
      } catch (const EvalError& x) {
        fail(file_, ep, std::string(x.what()) + " (an incore's writes may use s0 .. s15, its scalars, and block_num)");
      }
    };
    std::vector<IncoreWrite> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string wp = pointer_join(p, i);
      const J& w = v[i];
      if (!w.is_object()) fail(file_, wp, "expected an object, got " + json_input::describe_json(w));
      check_keys(w, file_, wp, {"arg", "index", "element", "value"});
      IncoreWrite x;
      x.path = wp;
      std::int64_t arg = -1;
      if (!json_input::json_int64(need(w, wp, "arg"), arg) || arg < 0 || arg >= 32)
        fail(file_, pointer_join(wp, "arg"), "expected an argument index in [0, 31]");
      x.arg = static_cast<int>(arg);
      if (w.contains("index") == w.contains("element")) fail(file_, wp, "expected exactly one of \"index\" or \"element\"");
      if (const J* idx = get(w, "index")) {
        if (!idx->is_array() || idx->empty() || idx->size() > 5)
          fail(file_, pointer_join(wp, "index"), "expected a list of 1 to 5 integers or expressions");
        for (std::size_t d = 0; d < idx->size(); ++d) x.index.push_back(expr((*idx)[d], pointer_join(pointer_join(wp, "index"), d)));
      } else {
        x.element = expr(w.at("element"), pointer_join(wp, "element"));
      }
      x.value = expr(need(w, wp, "value"), pointer_join(wp, "value"));
      out.push_back(std::move(x));
    }
    return out;
  }

  // Tensors become the trace's external tensors arg0, arg1, ... in order.
  void args(const J& v) {
    const std::string p = "/args";
    if (!v.is_array()) fail(file_, p, "expected a list, got " + json_input::describe_json(v));
    d_.args_json = v.dump();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string ap = pointer_join(p, i);
      const J& a = v[i];
      if (!a.is_object() || a.size() != 1 || !(a.contains("tensor") || a.contains("scalar")))
        fail(file_, ap, "expected {\"tensor\": {...}} or {\"scalar\": N}");
      if (const J* t = get(a, "tensor")) {
        trace::ExternalTensor e = trace::parse_tensor(*t, "arg" + std::to_string(i), file_, pointer_join(ap, "tensor"));
        d_.arg_order.push_back(static_cast<int>(t_.tensors.size()));
        t_.tensors.push_back(std::move(e));
        continue;
      }
      const J& s = a.at("scalar");
      std::uint64_t bits = 0;
      std::int64_t i64 = 0;
      if (json_input::json_int64(s, i64)) {
        bits = static_cast<std::uint64_t>(i64);
      } else if (s.is_number_unsigned()) {
        bits = s.get<std::uint64_t>();
      } else if (s.is_number_float()) {  // a float scalar: its float32 bits, as to_u64(float) stores it
        const float f = static_cast<float>(s.get<double>());
        std::uint32_t u = 0;
        std::memcpy(&u, &f, sizeof u);
        bits = u;
      } else {
        fail(file_, pointer_join(ap, "scalar"), "expected a number, got " + json_input::describe_json(s));
      }
      d_.arg_order.push_back(-static_cast<int>(d_.scalars.size()) - 1);
      d_.scalars.push_back(bits);
    }
    if (t_.tensors.size() > 256) fail(file_, p, "at most 256 tensor arguments (CHIP_MAX_TENSOR_ARGS)");
    if (d_.scalars.size() > 128) fail(file_, p, "at most 128 scalar arguments (CHIP_MAX_SCALAR_ARGS)");
  }

  std::string file_;
  json_input::Getters<J> json_;  // the typed getters, naming file_
  SceneDef& d_;
  trace::Trace& t_;
};

}  // namespace

const Incore* SceneDef::incore(int func_id) const {
  for (const Incore& i : incores)
    if (i.kernel->func_id == func_id) return &i;
  return nullptr;
}

std::string sdk_include_dir() {
  if (const char* d = std::getenv("NPUSIM_SDK_DIR"); d && *d) return d;
  const fs::path exe = fs::path(host::self_exe()).parent_path();
  for (const fs::path& p : {exe / ".." / "include" / "npusim", fs::path(NPUSIM_SOURCE_DIR) / "sim" / "sdk" / "include"})
    if (fs::is_regular_file(p / "pto_orchestration_api.h")) return fs::absolute(p).lexically_normal().string();
  return (fs::path(NPUSIM_SOURCE_DIR) / "sim" / "sdk" / "include").string();
}

std::string runner_path() {
  if (const char* r = std::getenv("NPUSIM_ORCH_RUNNER"); r && *r) return r;
  const fs::path beside = fs::path(host::self_exe()).parent_path() / "npusim-orch-runner";
  if (fs::is_regular_file(beside)) return beside.string();
#ifdef NPUSIM_RUNNER_BUILD_PATH
  return NPUSIM_RUNNER_BUILD_PATH;
#else
  return beside.string();
#endif
}

namespace {

// Dependencies recorded by the compiler (-MMD): "target: a b \\\n c", with
// make's escapes in the names (GCC and Clang write a space as "\\ ", a '#'
// as "\\#", a '$' as "$$", and double a backslash before a space).
std::vector<std::string> make_deps(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool target = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '\\' && next == '\n') {  // a continued line
      ++i;
      continue;
    }
    if (c == '\\' && (next == ' ' || next == '#' || next == '\t')) {
      cur += next;
      ++i;
      continue;
    }
    if (c == '\\' && next == '\\' && i + 2 < text.size() && text[i + 2] == ' ') {  // a backslash, then the separator
      cur += '\\';
      ++i;
      continue;
    }
    if (c == '$' && next == '$') {
      cur += '$';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!cur.empty() && !target) out.push_back(cur);
      cur.clear();
      continue;
    }
    if (c == ':' && target && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      target = false;
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty() && !target) out.push_back(cur);
  return out;
}

std::string hash_hex(std::uint64_t h) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The content hash of a file ("" if it cannot be read: never a file's hash,
// so an entry listing an unreadable file is stale).
std::string file_hash(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";  // (a folder opens, and reads as empty)
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return "";
  return hash_hex(fnv1a(s.str()));
}

}  // namespace

std::string build_library(const SceneDef& scene) {
  if (!scene.library.empty()) return scene.library;
  const std::string sdk = sdk_include_dir();
  const std::vector<std::string> flags = {"-std=c++17", "-O2", "-g", "-fPIC", "-shared", "-I" + sdk,
                                          "-I" + fs::path(scene.source).parent_path().string()};
  const std::string where = "/orchestration/source";
  // Cached by content: the entry for this source, flags and compiler lists
  // every file the compiler read with its content hash, and the library;
  // it is used while all of them are unchanged.
  std::string version;
  run_command({compiler(), "--version"}, version);
  std::uint64_t key = fnv1a(scene.source);
  for (const std::string& f : flags) key = fnv1a(f, key);
  key = fnv1a(version, key);
  const fs::path dir = cache_dir();
  const std::string stem = fs::path(scene.source).stem().string() + "-" + hash_hex(key);
  const fs::path entry = dir / (stem + ".deps");
  {
    // Fresh when every listed file reads with its hash (an entry lists the
    // source at least: an empty one is stale).
    std::ifstream in(entry);
    std::string lib, line;
    bool fresh = static_cast<bool>(std::getline(in, lib)) && !lib.empty() && fs::is_regular_file(dir / lib);
    int listed = 0;
    while (fresh && std::getline(in, line)) {
      const std::size_t tab = line.rfind('\t');
      fresh = tab != std::string::npos && tab + 1 < line.size() && file_hash(line.substr(0, tab)) == line.substr(tab + 1);
      ++listed;
    }
    if (fresh && listed > 0) return (dir / lib).string();
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string pid = std::to_string(::getpid());
  const TempFile tmp((dir / (stem + ".so.tmp" + pid)).string()), dtmp((dir / (stem + ".d.tmp" + pid)).string());
  std::vector<std::string> cc = {compiler()};
  cc.insert(cc.end(), flags.begin(), flags.end());
  cc.insert(cc.end(), {"-MMD", "-MF", dtmp.path(), "-o", tmp.path(), scene.source});
  std::string out;
  if (run_command(cc, out, {tmp.path(), dtmp.path()}) != 0)
    throw InputError(scene.file, where, "does not compile against the npusim SDK (" + sdk + "):\n" + first_lines(out, 40));
  std::ifstream din(dtmp.path());
  std::ostringstream dtext;
  dtext << din.rdbuf();
  // The listing: what the compiler read, the source first whatever the
  // dependency file says. A file that cannot be read now leaves no entry
  // (the library is used for this run only).
  std::vector<std::string> deps = {scene.source};
  for (const std::string& dep : make_deps(dtext.str())) {
    const std::string abs = fs::absolute(dep).lexically_normal().string();
    if (std::find(deps.begin(), deps.end(), abs) == deps.end()) deps.push_back(abs);
  }
  std::string listing;
  std::uint64_t content = key;
  bool complete = true;
  for (const std::string& abs : deps) {
    const std::string h = file_hash(abs);
    complete = complete && !h.empty();
    listing += abs + "\t" + h + "\n";
    content = fnv1a(abs + h, content);
  }
  const std::string lib = stem + "-" + hash_hex(content) + ".so";
  fs::rename(tmp.path(), dir / lib, ec);
  if (ec) throw InputError(scene.file, where, "cannot write the compiled program to the cache " + dir.string() + ": " + ec.message());
  if (complete) {
    const TempFile etmp((dir / (stem + ".deps.tmp" + pid)).string());
    std::ofstream(etmp.path()) << lib << "\n" << listing;
    fs::rename(etmp.path(), entry, ec);
  } else {
    fs::remove(entry, ec);
  }
  return (dir / lib).string();
}

namespace {

// The scene as the engine's external program.
class SceneProgram : public trace::ExternalProgram {
 public:
  explicit SceneProgram(std::shared_ptr<SceneDef> def) : def_(std::move(def)) {}
  std::unique_ptr<OpSource> start(const trace::Trace& trace, DataStore& data, const Platform& platform,
                                  const RunConfig& config) override {
    if (library_.empty()) library_ = build_library(*def_);
    return make_scene_source(*def_, library_, trace, data, platform, config, composed_, hooks_);
  }
  std::vector<const KernelDef*> defined_kernels() const override {
    std::vector<const KernelDef*> out;
    for (const auto& k : composed_) out.push_back(k.get());
    return out;
  }
  const SceneDef& def() const { return *def_; }
  SceneHooks hooks_;

 private:
  std::shared_ptr<SceneDef> def_;
  std::string library_;
  std::vector<std::unique_ptr<KernelDef>> composed_;
};

}  // namespace

trace::Trace load_program(const std::string& path, std::shared_ptr<const std::string>* text_out, bool check_ops) {
  if (path == "-") return trace::load_trace(path, text_out, check_ops);
  auto shared = std::make_shared<const std::string>(json_input::read_text(path, path, trace::kMaxTraceBytes, "trace file"));
  const std::string& text = *shared;
  if (text_out) *text_out = shared;  // one copy, shared with the trace's program
  const std::string stem = fs::path(path).stem().string();
  if (text.find("\"npusim_scene\"") == std::string::npos) return trace::parse_trace(shared, path, stem, check_ops);
  J root = json_input::parse_document(text, path);
  if (!root.is_object() || !root.contains("npusim_scene")) return trace::trace_from_json(root, path, stem);
  trace::Trace t;
  auto def = std::make_shared<SceneDef>();
  SceneLoader(path, *def, t).load(root, stem);
  t.external = std::make_shared<SceneProgram>(def);
  return t;
}

const SceneDef* scene_of(const trace::Trace& t) {
  auto* p = dynamic_cast<const SceneProgram*>(t.external.get());
  return p ? &p->def() : nullptr;
}

void set_hooks(trace::Trace& t, SceneHooks hooks) {
  if (auto* p = dynamic_cast<SceneProgram*>(t.external.get())) p->hooks_ = std::move(hooks);
}

}  // namespace npusim::scene
