// "Did you mean": the candidate a mistyped word was most likely meant to be
// (a subcommand, an option, a key). docs/outputs.md, "Command line".
#pragma once

#include <string>
#include <vector>

namespace npusim::config {

// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word`, or "" when none is close: at most one
// edit per three characters of the word (at least one, at most three), or
// the word is the start (three characters or more) of exactly one
// candidate. Ties go to the first candidate listed.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace npusim::config
