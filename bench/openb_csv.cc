#include "bench/openb_csv.h"

#include <charconv>
#include <map>

#include "base/files.h"
#include "base/strings.h"

namespace topofit::bench {
namespace {

// Splits one CSV line on commas. The openb files never quote fields, so quotes are not handled.
std::vector<std::string_view> SplitCsv(std::string_view line) { return Split(line, ','); }

// Rows of a CSV with a header, fields looked up by column name.
class CsvTable {
 public:
  static Result<CsvTable> Parse(std::string_view text) {
    CsvTable t;
    int line_no = 0;
    for (std::string_view raw : SplitLines(text)) {
      ++line_no;
      std::string_view line = Trim(raw);
      if (line.empty()) continue;
      if (t.columns_.empty()) {
        auto names = SplitCsv(line);
        for (size_t i = 0; i < names.size(); ++i) t.columns_[std::string(Trim(names[i]))] = int(i);
        continue;
      }
      t.rows_.push_back({line_no, SplitCsv(line)});
    }
    if (t.columns_.empty()) return Error{"empty CSV: no header line"};
    return t;
  }

  int Column(const std::string& name) const {
    auto it = columns_.find(name);
    return it == columns_.end() ? -1 : it->second;
  }

  struct Row {
    int line;
    std::vector<std::string_view> fields;
  };
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::map<std::string, int> columns_;
  std::vector<Row> rows_;
};

std::string_view Field(const CsvTable::Row& row, int col) {
  if (col < 0 || col >= int(row.fields.size())) return {};
  return Trim(row.fields[col]);
}

Result<int64_t> IntField(const CsvTable::Row& row, int col, const char* name, bool required) {
  std::string_view f = Field(row, col);
  if (f.empty()) {
    if (required) return Error{"line " + std::to_string(row.line) + ": missing " + name};
    return int64_t{0};
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || end != f.data() + f.size() || v < 0) {
    return Error{"line " + std::to_string(row.line) + ", column " + name + ": expected a non-negative integer, got '" +
                 std::string(f) + "'"};
  }
  return v;
}

Status NeedColumns(const CsvTable& t, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (t.Column(n) < 0) return Error{std::string("missing column '") + n + "' in the header"};
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<NodeSpec>> ParseOpenbNodes(std::string_view csv_text) {
  auto table = CsvTable::Parse(csv_text);
  if (!table) return Error{table.error()};
  if (auto st = NeedColumns(*table, {"sn", "cpu_milli", "memory_mib", "gpu"}); !st) return Error{st.error()};
  int c_sn = table->Column("sn"), c_cpu = table->Column("cpu_milli"), c_mem = table->Column("memory_mib"),
      c_gpu = table->Column("gpu"), c_model = table->Column("model");
  std::vector<NodeSpec> out;
  for (const auto& row : table->rows()) {
    NodeSpec n;
    n.name = std::string(Field(row, c_sn));
    auto cpu = IntField(row, c_cpu, "cpu_milli", true);
    auto mem = IntField(row, c_mem, "memory_mib", true);
    auto gpu = IntField(row, c_gpu, "gpu", true);
    for (auto* r : {&cpu, &mem, &gpu}) {
      if (!*r) return Error{r->error()};
    }
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.gpus = int(*gpu);
    n.model = std::string(Field(row, c_model));
    if (n.gpus > 0 && n.model.empty()) {
      return Error{"line " + std::to_string(row.line) + ": node with GPUs but no model"};
    }
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::vector<PodSpec>> ParseOpenbPods(std::string_view csv_text) {
  auto table = CsvTable::Parse(csv_text);
  if (!table) return Error{table.error()};
  if (auto st = NeedColumns(*table, {"name", "cpu_milli", "memory_mib", "num_gpu"}); !st) return Error{st.error()};
  int c_name = table->Column("name"), c_cpu = table->Column("cpu_milli"), c_mem = table->Column("memory_mib"),
      c_ngpu = table->Column("num_gpu"), c_milli = table->Column("gpu_milli"), c_spec = table->Column("gpu_spec"),
      c_create = table->Column("creation_time"), c_delete = table->Column("deletion_time");
  std::vector<PodSpec> out;
  for (const auto& row : table->rows()) {
    PodSpec p;
    p.name = std::string(Field(row, c_name));
    auto cpu = IntField(row, c_cpu, "cpu_milli", true);
    auto mem = IntField(row, c_mem, "memory_mib", true);
    auto ngpu = IntField(row, c_ngpu, "num_gpu", true);
    auto milli = IntField(row, c_milli, "gpu_milli", false);
    auto create = IntField(row, c_create, "creation_time", false);
    for (auto* r : {&cpu, &mem, &ngpu, &milli, &create}) {
      if (!*r) return Error{r->error()};
    }
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.gpus = int(*ngpu);
    p.gpu_milli = p.gpus > 0 ? int(*milli ? *milli : 1000) : 0;
    p.creation_time = *create;
    if (!Field(row, c_delete).empty()) {
      auto del = IntField(row, c_delete, "deletion_time", true);
      if (!del) return Error{del.error()};
      p.deletion_time = *del;
    }
    std::string_view spec = Field(row, c_spec);
    while (!spec.empty()) {
      size_t bar = spec.find('|');
      std::string_view m = Trim(spec.substr(0, bar));
      if (!m.empty()) p.gpu_models.emplace_back(m);
      if (bar == std::string_view::npos) break;
      spec.remove_prefix(bar + 1);
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<NodeSpec>> ReadOpenbNodes(const std::string& path) { return ParseFile(path, ParseOpenbNodes); }

Result<std::vector<PodSpec>> ReadOpenbPods(const std::string& path) { return ParseFile(path, ParseOpenbPods); }

}  // namespace topofit::bench
