# The training run of profile-guided optimisation (CMakeLists.txt, NPUSIM_PGO):
#   cmake -DNPUSIM=<instrumented npusim> -DTRACES=<traces/> -DPROFILE=<profile dir>
#         -DOUT=<scratch dir> -DSTAMP=<file written when done> -P tools/pgo_train.cmake
# Runs every example trace (traces/*.json but the bench traces, which are the
# benchmark's workloads, not its training) three times: with every output on,
# with every output on and --compress gzip, and with outputs off. The
# instrumented npusim writes its counts to the directory it was built with
# (-fprofile-generate=PROFILE): PROFILE must be that directory. A run that
# fails (or hangs) stops the build: its profile would be a partial one.
foreach(v NPUSIM TRACES PROFILE OUT STAMP)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "pgo_train.cmake: -D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${PROFILE}" "${OUT}")  # profiles add up run after run: start from none
file(REMOVE "${STAMP}")
file(GLOB traces "${TRACES}/*.json")
list(SORT traces)
set(runs 0)
foreach(trace IN LISTS traces)
  get_filename_component(name "${trace}" NAME_WE)
  if(name MATCHES "^bench_")
    continue()
  endif()
  foreach(mode on gzip off)
    set(args run "${trace}" --out "${OUT}/${name}_${mode}" --quiet)
    if(mode STREQUAL "off")
      list(APPEND args --swimlane-level 0 --no-deps --no-scope-stats --no-task-stats)
    elseif(mode STREQUAL "gzip")
      list(APPEND args --compress gzip)
    endif()
    # A run that hangs (a model regression) fails the build after 10 minutes
    # instead of holding it (an instrumented run of the largest example takes
    # a second or two).
    execute_process(COMMAND "${NPUSIM}" ${args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 600)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pgo_train.cmake: npusim ${args} failed (${rc}): ${err}")
    endif()
    math(EXPR runs "${runs} + 1")
  endforeach()
endforeach()
file(REMOVE_RECURSE "${OUT}")
if(runs EQUAL 0)
  message(FATAL_ERROR "pgo_train.cmake: no trace in ${TRACES}")
endif()
file(WRITE "${STAMP}" "${runs} training runs\n")
