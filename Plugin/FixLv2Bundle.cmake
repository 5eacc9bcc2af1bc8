# SPDX-License-Identifier: GPL-3.0-or-later
# Run after JUCE writes the LV2 bundle's Turtle (cmake -DBUNDLE=Quell.lv2 -P FixLv2Bundle.cmake): what JUCE
# 7.0.5's generator gets wrong for lv2_validate, and what it cannot say.
# - Its parameters (lv2:Parameter, not ports) carry lv2:portProperty, whose domain is lv2:Port: dropped
#   (the hosts that read a parameter's kind take it from its range and scale points).
# - The plugin carries doap:maintainer and doap:release without being a doap:Project; the preset's state
#   names a Program property that nothing defines.
# - The UI lists ui:noUserResize (a feature) as extension data and opts:interface (extension data) as a
#   feature.
# - The category (lv2:FilterPlugin) and the far-end input marked as the sidechain (lv2:isSideChain).
cmake_minimum_required(VERSION 3.24)
if(NOT BUNDLE OR NOT EXISTS "${BUNDLE}/dsp.ttl")
  message(FATAL_ERROR "FixLv2Bundle: BUNDLE must name an LV2 bundle with dsp.ttl")
endif()

function(rewrite file)
  file(READ "${BUNDLE}/${file}" text)
  set(original "${text}")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE 1 ${last} 2)
    math(EXPR j "${i} + 1")
    string(REGEX REPLACE "${ARGV${i}}" "${ARGV${j}}" text "${text}")
  endforeach()
  if(NOT text STREQUAL original)
    file(WRITE "${BUNDLE}/${file}" "${text}")
  endif()
endfunction()

rewrite(dsp.ttl
  "\n\tlv2:portProperty lv2:(enumeration|toggled)( , lv2:toggled)? ;" ""
  "\n\ta lv2:Plugin ;" "\n\ta lv2:Plugin , lv2:FilterPlugin , doap:Project ;"
  "\n\t\tfoaf:mbox <> ;" ""
  "\n\t\tfoaf:homepage <> ;" ""
  "(lv2:symbol \"audio_in_2\" ;\n\t\tlv2:name )\"[^\"]*\" ;" "\\1\"Far end\" ;\n\t\tlv2:portProperty lv2:isSideChain ;")
file(READ "${BUNDLE}/dsp.ttl" dsp)
if(NOT dsp MATCHES "plug:Program\n")
  file(APPEND "${BUNDLE}/dsp.ttl" "\nplug:Program\n\ta lv2:Parameter ;\n\trdfs:label \"Program\" ;\n\trdfs:range atom:Int .\n")
endif()
rewrite(ui.ttl
  "\n\t\tui:noUserResize ,\n\t\tui:resize ;" "\n\t\tui:resize ;"
  "\n\t\topts:interface ,\n\t\topts:options ;" "\n\t\topts:options ;")
rewrite(manifest.ttl
  "\n\ta lv2:Plugin ;" "\n\ta lv2:Plugin , lv2:FilterPlugin ;")
