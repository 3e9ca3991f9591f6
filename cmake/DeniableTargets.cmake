# deniable_project_targets(OUT): every target defined in this project's directories (the
# top-level one and all below it), for the functions that set properties across the tree once
# every add_subdirectory has run (cmake/DeniableUnityBuild.cmake, cmake/DeniableTestBuild.cmake).
function(deniable_project_targets out)
  set(all "")
  set(dirs ${CMAKE_CURRENT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    list(APPEND all ${targets})
  endwhile()
  set(${out} ${all} PARENT_SCOPE)
endfunction()
